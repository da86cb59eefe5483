//! The CSV files the benchmarks append to and the plots read: plain comma-separated rows with a
//! header line, no quoting (no field holds a comma).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// The columns of the benchmarks' rows, one per cell and arm (`kernels --csv`, `batch
/// --csv`): the perf front page, the plots and the load matrix read both alike. A ratio is the
/// median over rounds of the arm's time over the serial reference's in the same round (faer
/// serial; for a batch, the serial loop of faer's calls).
pub const ARM_COLUMNS: &str = "kernel,scalar,n,width,arm,median_us,p90_us,max_us,ratio_to_serial";

/// A CSV file opened for appending rows.
#[derive(Debug)]
pub struct Csv {
    file: File,
}

impl Csv {
    /// Opens `path` for appending, writing `header` first when the file is new or empty.
    pub fn append(path: impl AsRef<Path>, header: &str) -> io::Result<Csv> {
        let mut file = OpenOptions::new().create(true).append(true).open(path)?;
        if file.metadata()?.len() == 0 {
            writeln!(file, "{header}")?;
        }
        Ok(Csv { file })
    }

    /// Appends one row.
    ///
    /// # Panics
    /// When the row cannot be written, or a field holds a comma or a line break.
    pub fn row(&mut self, fields: &[&str]) {
        assert!(
            fields.iter().all(|f| !f.contains([',', '\n'])),
            "a CSV field with a comma or a line break: {fields:?}"
        );
        writeln!(self.file, "{}", fields.join(",")).expect("write a CSV row");
    }
}

/// The rows of a CSV file with a header, as maps from column name to field.
pub fn read(path: impl AsRef<Path>) -> io::Result<Vec<std::collections::BTreeMap<String, String>>> {
    let text = std::fs::read_to_string(path)?;
    Ok(parse(&text))
}

/// [`read`] on text.
pub fn parse(text: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let names: Vec<&str> = header.split(',').collect();
    lines
        .map(|l| {
            names
                .iter()
                .zip(l.split(','))
                .map(|(n, f)| (n.to_string(), f.to_string()))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_with_one_header() {
        let dir = std::env::temp_dir().join(format!("teamalg-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        let _ = std::fs::remove_file(&path);
        Csv::append(&path, "a,b").unwrap().row(&["1", "x"]);
        Csv::append(&path, "a,b").unwrap().row(&["2", "y"]);
        let rows = read(&path).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[1]["a"].as_str(), rows[1]["b"].as_str()), ("2", "y"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
