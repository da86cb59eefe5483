//! Draws the pictures of `docs/perf/` from the benchmarks' CSV output, and writes them with
//! the tables of the same rows into `docs/perf/figures.md`:
//!
//! ```text
//! cargo run --release -p teamalg-tools --bin kernels -- --csv docs/perf/data/kernels.csv
//! cargo run --release -p teamalg-tools --bin wait_scenarios -- --impl teamalg,omp,rayon --csv docs/perf/data/waits.csv
//! cargo run --release -p teamalg-tools --bin plots -- [--kernels FILE] [--waits FILE]
//!     [--width W] [--out DIR] [--host TEXT]
//! ```

use std::path::PathBuf;

use teamalg_tools::plots;

fn main() {
    let mut kernels = PathBuf::from("docs/perf/data/kernels.csv");
    let mut waits = PathBuf::from("docs/perf/data/waits.csv");
    let mut out = PathBuf::from("docs/perf");
    let mut width = 2usize;
    let mut host = String::from("(not given)");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || {
            args.next()
                .unwrap_or_else(|| fail(&format!("{a} needs a value")))
        };
        match a.as_str() {
            "--kernels" => kernels = val().into(),
            "--waits" => waits = val().into(),
            "--out" => out = val().into(),
            "--width" => width = val().parse().unwrap_or_else(|_| fail("--width N")),
            "--host" => host = val(),
            "-h" | "--help" => {
                println!(
                    "plots [--kernels FILE] [--waits FILE] [--width W] [--out DIR] [--host TEXT]"
                );
                return;
            }
            other => fail(&format!("unknown option {other}")),
        }
    }
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p).unwrap_or_else(|e| fail(&format!("{}: {e}", p.display())))
    };
    let krows = plots::kernel_rows(&read(&kernels));
    let wrows = plots::wait_rows(&read(&waits));
    let write = |name: &str, text: &str| {
        let p = out.join(name);
        std::fs::write(&p, text).unwrap_or_else(|e| fail(&format!("{}: {e}", p.display())));
        println!("wrote {}", p.display());
    };
    write(
        "kernels.svg",
        &plots::kernels_svg(&krows).unwrap_or_else(|e| fail(&e)),
    );
    write(
        "waits.svg",
        &plots::waits_svg(&wrows, width).unwrap_or_else(|e| fail(&e)),
    );
    let md = format!(
        "# Figures\n\n\
         Drawn by `cargo run --release -p teamalg-tools --bin plots` from `{}` and `{}`; the\n\
         tables are printed from the same rows. Host: {host}. How the rows were measured:\n\
         `docs/perf/kernels.md` and `docs/perf/waits.md`.\n\n\
         ## Kernels: speedup over faer serial\n\n\
         Arms interleaved call by call (`cargo run --release -p teamalg-tools --bin kernels -- --csv FILE`); a speedup\n\
         is the median over rounds of faer serial's time over the arm's, in the same round.\n\n\
         ![kernels](kernels.svg)\n\n{}\n\
         ## Waits beside libgomp and rayon\n\n\
         Median time per call of each case at width {width}\n\
         (`cargo run --release -p teamalg-tools --bin wait_scenarios -- --impl teamalg,omp,rayon --csv FILE`).\n\n\
         ![waits](waits.svg)\n\n{}",
        kernels.display(),
        waits.display(),
        plots::kernels_table(&krows),
        plots::waits_table(&wrows, width)
    );
    write("figures.md", &md);
}

fn fail(msg: &str) -> ! {
    eprintln!("plots: {msg}");
    std::process::exit(2)
}
