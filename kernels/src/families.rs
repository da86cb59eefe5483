//! The family list of the kernels: which decomposition's `cost.rs` holds each family's
//! built-in rows ([`rows`], the gates' [`Catalogue`]), and the built-in model they make
//! ([`model`], [`host_model`]). A new family adds its variant to `teamalg_gates::Family` and
//! one arm here (`docs/adding-a-decomposition.md`).

use std::sync::OnceLock;

use teamalg_gates::{Catalogue, Family, HostClass, Model, Rows};

use crate::{
    cholesky, evd, gemm, lu, qr, sparse, sparse_cholesky, sparse_lu, sparse_qr, spectral, svd,
    triangular,
};

/// The built-in rows of `family`, from its decomposition's `cost.rs`.
pub fn rows(family: Family) -> Rows {
    match family {
        Family::Gemm => gemm::cost::ROWS,
        Family::TriangularSolve => triangular::cost::ROWS,
        Family::LuPartial => lu::cost::PARTIAL_ROWS,
        Family::LuFullStep => lu::cost::FULL_PIVOT_ROWS,
        Family::Cholesky => cholesky::cost::LLT_ROWS,
        Family::Ldlt => cholesky::cost::LDLT_ROWS,
        Family::Lblt => cholesky::cost::LBLT_ROWS,
        Family::Qr => qr::cost::HOUSEHOLDER_ROWS,
        Family::QrColPivStep => qr::cost::COL_PIV_ROWS,
        Family::BidiagStep => svd::cost::BIDIAG_ROWS,
        Family::BidiagSvdDc => svd::cost::BIDIAG_DC_ROWS,
        Family::TridiagStep => evd::cost::TRIDIAG_ROWS,
        Family::TridiagEvdDc => evd::cost::TRIDIAG_DC_ROWS,
        Family::HouseholderRank1 => spectral::cost::HOUSEHOLDER_RANK1_ROWS,
        Family::SparseProduct => sparse::cost::PRODUCT_ROWS,
        Family::SparseCholesky => sparse_cholesky::cost::ROWS,
        Family::SparseLu => sparse_lu::cost::ROWS,
        Family::SparseQr => sparse_qr::cost::ROWS,
        // `Family` is non-exhaustive: a family added to the gates before its rows is refused
        // here, when a model is first built.
        _ => panic!("no built-in rows for family {}", family.name()),
    }
}

/// [`rows`] as the gates take it.
pub const CATALOGUE: Catalogue = rows;

/// The built-in model of a host class: its cost rows and every family's rows.
pub fn model(class: HostClass) -> Model {
    Model::for_class(class, CATALOGUE)
}

/// The built-in model of this machine's class, built once.
pub fn host_model() -> &'static Model {
    static HOST: OnceLock<Model> = OnceLock::new();
    HOST.get_or_init(|| model(HostClass::detect()))
}

#[cfg(test)]
mod tests {
    use teamalg_gates::{builtin_split, CpuVendor, SplitCost};

    use super::*;

    #[test]
    fn every_family_has_rows_and_a_valid_model() {
        for class in [
            HostClass::X86_64Avx512,
            HostClass::Aarch64Apple,
            HostClass::Generic,
        ] {
            let m = model(class);
            for f in Family::ALL {
                let r = m.rate(f, 1e6);
                assert!(
                    r.values().iter().all(|x| x.is_finite() && *x > 0.0),
                    "{f:?}"
                );
            }
        }
    }

    #[test]
    fn builtin_curves_decay_beyond_two() {
        let lu = builtin_split(Family::LuPartial, CpuVendor::Amd, CATALOGUE).real;
        assert_eq!(lu.at(2), SplitCost::new(5832.0, 0.945));
        assert!((lu.at(16).efficiency - 0.945 * 0.125f64.powf(0.4)).abs() < 1e-12);
    }
}
