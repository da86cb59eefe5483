//! Streams after a pause: a held team whose member went to sleep charges its wake to the next
//! call, and a small call refuses it. The second refusal in a row posts the wake itself
//! (`teamalg_kernels::wakes`), so a stream of small calls goes parallel after its first
//! calls instead of staying serial for as long as it lasts. (Its own binary: it waits for the
//! team's member to sleep, which other tests' sections would disturb.)

use std::time::Duration;

use faer::{Accum, Mat};
use teamalg::Pool;
use teamalg::gates::trace::{self, Reason};
use teamalg::kernels::gemm::{GemmParams, matmul};

#[test]
fn a_stream_after_a_pause_pays_the_wake_once() {
    // The model alone decides (on a busy test machine the live view would add lateness).
    let team = Pool::builder()
        .threads(2)
        .live_view(false)
        .build()
        .expect("pool")
        .into_team(2)
        .expect("team");
    let n = 128;
    let a = Mat::<f64>::from_fn(n, n, |i, j| (i + 2 * j) as f64 * 0.01);
    let b = Mat::<f64>::from_fn(n, n, |i, j| (3 * i + j) as f64 * 0.01);
    let mut c = Mat::<f64>::zeros(n, n);
    let mut call = || {
        let ((), seen) = trace::collect(|| {
            matmul(
                c.as_mut(),
                Accum::Replace,
                a.as_ref(),
                b.as_ref(),
                1.0,
                &team,
                GemmParams::default(),
            )
        });
        seen[0].reason
    };
    // Awake (a stream in full swing), GEMM 128 goes parallel on this model.
    let hot: Vec<Reason> = (0..20).map(|_| call()).collect();
    assert!(hot.contains(&Reason::Paid), "{hot:?}");
    // The member sleeps after a pause (`rest`, then longer than its spin budget).
    team.rest();
    std::thread::sleep(Duration::from_millis(200));
    let stream: Vec<Reason> = (0..40).map(|_| call()).collect();
    assert_eq!(stream[0], Reason::WakeNotPaid, "{stream:?}");
    let first_paid = stream.iter().position(|r| *r == Reason::Paid);
    assert!(
        first_paid.is_some(),
        "the stream stayed serial, refusing the wake on every call: {stream:?}"
    );
    assert!(
        stream[first_paid.unwrap()..]
            .iter()
            .filter(|r| **r == Reason::WakeNotPaid)
            .count()
            <= 2,
        "the wake was charged again within the stream: {stream:?}"
    );
}
