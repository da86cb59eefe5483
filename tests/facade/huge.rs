//! Huge operands: every owned form sizes its result first and answers
//! `OutOfMemory` at once, before it scans or copies an entry, never a panic or a scan of
//! trillions of entries. The operands are stride-0 views of one element (no memory behind
//! them), so each case costs nothing once the sizing is right; each runs on a thread of its own
//! and must return within a generous limit, so a scan that would run for hours fails the test
//! instead of hanging it.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use faer::{Mat, MatRef, c64};
use teamalg::Exec;
use teamalg::linalg::{
    self, Cholesky, ColPivQr, Eigen, FullPivLu, Lblt, Ldlt, LinalgError, Lu, Qr, SelfAdjointEigen,
    Svd,
};

/// The order of the square cases: `N^2` entries of 8 bytes are 2^51 bytes, more than any
/// 64-bit address space maps, so the allocation fails whatever the machine's memory and
/// overcommit policy; and a scan of the `2^48` entries would run for days.
const N: usize = 1 << 24;

/// The rows of the tall case: `usize::MAX / 4 x 8` entries overflow the byte
/// count of any scalar type.
const TALL: usize = usize::MAX / 4;

static ONE: f64 = 1.0;
static ONE_C: c64 = c64::new(1.0, 0.0);

/// An `m x n` view whose every entry is `*one`.
fn huge<T>(one: &'static T, m: usize, n: usize) -> MatRef<'static, T> {
    // SAFETY: with both strides 0 every entry (i, j) is at `one`, a `'static` initialized `T`
    // valid for reads; a `MatRef` only reads, and nothing writes to a `static`.
    unsafe { MatRef::from_raw_parts(one as *const T, m, n, 0, 0) }
}

/// Runs `f` on a thread of its own and returns its error; fails if `f` panics, succeeds, or
/// has not returned within a minute (a scan of the whole operand would take days; the sizing
/// takes microseconds, the limit only tolerates a loaded machine).
fn refusal(f: impl FnOnce() -> Result<(), LinalgError> + Send + 'static) -> LinalgError {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(r) => r.expect_err("a huge operand must be refused"),
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the call did not return within 60 s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the call panicked"),
    }
}

/// The refusal every case owes: the result does not fit, named by the call's operation.
fn oom(op: &'static str) -> LinalgError {
    LinalgError::OutOfMemory { op }
}

#[test]
fn lu_sizes_before_it_scans() {
    let e = refusal(|| Lu::new(huge(&ONE, N, N), &Exec::serial()).map(drop));
    assert_eq!(e, oom("lu"));
    // Without the finiteness scan too, and on a conjugated view.
    let e = refusal(|| {
        let o = linalg::Options::new().check_finite(false);
        Lu::new_with(huge(&ONE_C, N, N).conjugate(), &Exec::serial(), &o).map(drop)
    });
    assert_eq!(e, oom("lu"));
}

#[test]
fn qr_of_the_tall_view_is_refused() {
    let e = refusal(|| Qr::new(huge(&ONE, TALL, 8), &Exec::serial()).map(drop));
    assert_eq!(e, oom("qr"));
    let e = refusal(|| ColPivQr::new(huge(&ONE, TALL, 8), &Exec::serial()).map(drop));
    assert_eq!(e, oom("col_piv_qr"));
}

#[test]
fn square_factorizations_size_first() {
    let e = refusal(|| Cholesky::new(huge(&ONE, N, N), &Exec::serial()).map(drop));
    assert_eq!(e, oom("cholesky"));
    let e = refusal(|| Ldlt::new(huge(&ONE, N, N), &Exec::serial()).map(drop));
    assert_eq!(e, oom("ldlt"));
    let e = refusal(|| Lblt::new(huge(&ONE, N, N), &Exec::serial()).map(drop));
    assert_eq!(e, oom("lblt"));
    let e = refusal(|| FullPivLu::new(huge(&ONE, N, N), &Exec::serial()).map(drop));
    assert_eq!(e, oom("full_piv_lu"));
    let e = refusal(|| ColPivQr::new(huge(&ONE, N, N), &Exec::serial()).map(drop));
    assert_eq!(e, oom("col_piv_qr"));
    // A shape error is still found first: it costs nothing to see.
    let e = refusal(|| Ldlt::new(huge(&ONE, N, N - 1), &Exec::serial()).map(drop));
    assert!(
        matches!(e, LinalgError::NotSquare { op: "ldlt", .. }),
        "{e:?}"
    );
    let e = refusal(|| Cholesky::new(huge(&ONE, N, N - 1), &Exec::serial()).map(drop));
    assert!(
        matches!(e, LinalgError::NotSquare { op: "cholesky", .. }),
        "{e:?}"
    );
}

#[test]
fn svd_sizes_its_factors_and_copies() {
    let e = refusal(|| Svd::new(huge(&ONE, N, N), &Exec::serial()).map(drop));
    assert_eq!(e, oom("svd"));
    let e = refusal(|| Svd::new_thin(huge(&ONE, TALL, 8), &Exec::serial()).map(drop));
    assert_eq!(e, oom("svd"));
    // A conjugated view is copied: the copy is sized first.
    let e = refusal(|| {
        linalg::singular_values(huge(&ONE_C, N, N).conjugate(), &Exec::serial()).map(drop)
    });
    assert_eq!(e, oom("singular_values"));
    let e = refusal(|| {
        let mut s = [0.0f64; 1];
        let o = linalg::Options::new();
        linalg::svd_into(
            huge(&ONE_C, TALL, 1).conjugate(),
            &mut s,
            None,
            None,
            &Exec::serial(),
            &o,
        )
    });
    assert_eq!(e, oom("svd"));
}

#[test]
fn eigendecompositions_size_first() {
    let e = refusal(|| SelfAdjointEigen::new(huge(&ONE, N, N), &Exec::serial()).map(drop));
    assert_eq!(e, oom("self_adjoint_eigen"));
    let e = refusal(|| {
        linalg::self_adjoint_eigenvalues(huge(&ONE_C, N, N).conjugate(), &Exec::serial()).map(drop)
    });
    assert_eq!(e, oom("self_adjoint_eigenvalues"));
    let e = refusal(|| Eigen::new(huge(&ONE, N, N), &Exec::serial()).map(drop));
    assert_eq!(e, oom("eigen"));
    let e = refusal(|| linalg::eigenvalues(huge(&ONE_C, N, N), &Exec::serial()).map(drop));
    assert_eq!(e, oom("eigenvalues"));
}

#[test]
fn owned_solves_size_their_copy_of_b() {
    let a = Mat::<f64>::identity(2, 2);
    let e = refusal(move || {
        let lu = Lu::new(&a, &Exec::serial())?;
        lu.solve(huge(&ONE, 2, TALL), &Exec::serial()).map(drop)
    });
    assert_eq!(e, oom("solve"));
    let a = Mat::<f64>::identity(2, 2);
    let e = refusal(move || {
        let ch = Cholesky::new(&a, &Exec::serial())?;
        ch.rsolve_adjoint(huge(&ONE, TALL, 2), &Exec::serial())
            .map(drop)
    });
    assert_eq!(e, oom("rsolve_adjoint"));
    let a = Mat::<f64>::identity(3, 2);
    let e = refusal(move || {
        let qr = Qr::new(&a, &Exec::serial())?;
        qr.lstsq(huge(&ONE, 3, TALL), &Exec::serial()).map(drop)
    });
    assert_eq!(e, oom("lstsq"));
    let a = Mat::<f64>::identity(3, 2);
    let e = refusal(move || {
        let qr = Qr::new(&a, &Exec::serial())?;
        qr.apply_q(huge(&ONE, 3, TALL), &Exec::serial()).map(drop)
    });
    assert_eq!(e, oom("apply_q"));
    let a = Mat::<f64>::identity(3, 2);
    let e = refusal(move || {
        let qr = Qr::new(&a, &Exec::serial())?;
        qr.min_norm_adjoint(huge(&ONE, 2, TALL), &Exec::serial())
            .map(drop)
    });
    assert_eq!(e, oom("min_norm_adjoint"));
    let a = Mat::<f64>::identity(3, 2);
    let e = refusal(move || {
        let qr = ColPivQr::new(&a, &Exec::serial())?;
        qr.lstsq(huge(&ONE, 3, TALL), &Exec::serial()).map(drop)
    });
    assert_eq!(e, oom("lstsq"));
    let a = Mat::<f64>::identity(3, 2);
    let e = refusal(move || {
        let qr = ColPivQr::new(&a, &Exec::serial())?;
        qr.apply_q_adjoint(huge(&ONE, 3, TALL), &Exec::serial())
            .map(drop)
    });
    assert_eq!(e, oom("apply_q_adjoint"));
    let a = Mat::<f64>::identity(3, 2);
    let e = refusal(move || {
        let svd = Svd::new_thin(&a, &Exec::serial())?;
        svd.lstsq(huge(&ONE, 3, TALL), &Exec::serial()).map(drop)
    });
    assert_eq!(e, oom("lstsq"));
}

#[test]
fn an_empty_shape_of_huge_extent_answers_at_once() {
    // No entry to read, yet `n` columns: each step over them (the scan, the copy, the kernel)
    // once took minutes.
    let big = 1usize << 40;
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let lu = Lu::new(huge(&ONE, 0, big), &Exec::serial()).map(|lu| lu.factors().ncols());
        let _ = tx.send(lu);
    });
    let got = rx.recv_timeout(Duration::from_secs(60));
    assert_eq!(got, Ok(Ok(big)), "a 0 x 2^40 LU is the empty factorization");
    // The QRs size their scratch by `n` and answer `OutOfMemory` for it today; the empty
    // factorization would be as right. Either way, at once.
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let qr = Qr::new(huge(&ONE, 0, big), &Exec::serial()).map(drop);
        let cp = ColPivQr::new(huge(&ONE, 0, big), &Exec::serial()).map(drop);
        let _ = tx.send((qr, cp));
    });
    let (qr, cp) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("answered at once");
    assert!(
        matches!(qr, Ok(()) | Err(LinalgError::OutOfMemory { op: "qr" })),
        "{qr:?}"
    );
    assert!(
        matches!(
            cp,
            Ok(()) | Err(LinalgError::OutOfMemory { op: "col_piv_qr" })
        ),
        "{cp:?}"
    );
}

/// A `Q` far larger than its factors: the full `Q` of a `2^24 x 1` QR is `2^24 x 2^24`
/// (2^51 bytes), refused as the factorizations are, while the thin one is formed.
#[test]
fn a_full_q_larger_than_memory_is_refused() {
    let e = refusal(|| {
        let qr = Qr::new(huge(&ONE, N, 1), &Exec::serial())?;
        assert_eq!(qr.q_thin(&Exec::serial())?.shape(), (N, 1));
        qr.q_full(&Exec::serial()).map(drop)
    });
    assert_eq!(e, oom("q_full"));
}
