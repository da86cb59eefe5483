//! A threshold per kernel family, at each level a user can reach, and the decision trace that
//! says why each region ran as it did.
//!
//! ```text
//! cargo run --release --example thresholds
//! TEAMALG_THRESHOLDS=gemm=never cargo run --release --example thresholds
//! ```

use faer::{Accum, Mat};
use teamalg::gates::{Family, ParThreshold, trace};
use teamalg::{Pool, linalg};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let w = teamalg::available_cpus().max(2);
    // The pool's level: LU never goes parallel on this pool (over TEAMALG_THRESHOLDS).
    let team = Pool::builder()
        .threads(w)
        .threshold(Family::LuPartial, ParThreshold::Never)
        .build()?
        .into_team(w)?;
    let n = 512;
    let a = Mat::<f64>::from_fn(n, n, |i, j| if i == j { n as f64 } else { 0.5 });
    let mut c = Mat::<f64>::zeros(n, n);

    let ((), decisions) = trace::collect(|| {
        // Derived (or the environment's): the rule decides.
        linalg::matmul(&mut c, Accum::Replace, &a, &a, 1.0, &team).expect("shapes agree");
        // The call's level wins over the pool's and the environment's.
        let small = linalg::Options::new().threshold(Family::Gemm, ParThreshold::Fixed(1 << 40));
        linalg::matmul_with(&mut c, Accum::Replace, &a, &a, 1.0, &team, &small)
            .expect("shapes agree");
        // The pool says never for LU.
        let mut f = a.clone();
        linalg::lu(f.as_mut(), &team).expect("finite input");
        // A call gives LU the rule back.
        let derived = linalg::Options::new().threshold(Family::LuPartial, ParThreshold::Derived);
        let mut f = a.clone();
        linalg::lu_with(f.as_mut(), &team, &derived).expect("finite input");
    });
    println!("{decisions}");
    Ok(())
}
