//! MPI ranks, each with its own team: every rank sizes its pool from its share of the node
//! (`teamalg::share::mpi::node_share`: its affinity mask, split with the ranks on the node that
//! have the same one), factors and solves its own blocks of a block-diagonal system with
//! `teamalg::linalg` on its team, and the ranks reduce the residual. Rank 0 prints the ranks,
//! the threads of each and the residual, and exits with 1 when the residual is not at rounding
//! level or the ranks together run more threads than their node has CPUs.
//!
//! ```text
//! cargo build --release --features mpi --example mpi_hybrid
//! mpirun -np 2 target/release/examples/mpi_hybrid [order] [blocks per rank]
//! ```

use faer::Mat;
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives};
use teamalg::linalg::Lu;
use teamalg::{Exec, Executor, Pool};

/// Block `g` of the system: a reproducible, diagonally dominant matrix (so well conditioned).
fn block(order: usize, g: usize) -> Mat<f64> {
    Mat::from_fn(order, order, |i, j| {
        let h = (i * 7919 + j * 104_729 + g * 1_299_709) % 1000;
        let off = h as f64 / 1000.0 - 0.5;
        if i == j { order as f64 + off } else { off }
    })
}

/// Solves this rank's blocks on `exec`: the sums of `||A x - b||^2` and of `||b||^2`.
fn solve_blocks(
    rank: usize,
    blocks: usize,
    order: usize,
    exec: &dyn Executor,
) -> Result<[f64; 2], Box<dyn std::error::Error>> {
    let mut sums = [0.0; 2];
    for local in 0..blocks {
        let g = rank * blocks + local;
        let a = block(order, g);
        let b = Mat::from_fn(order, 1, |i, _| ((i + g) % 5) as f64 - 2.0);
        let lu = Lu::new(&a, &exec)?;
        let x = lu.solve(&b, &exec)?;
        let r = &a * &x - &b;
        sums[0] += r.squared_norm_l2();
        sums[1] += b.squared_norm_l2();
    }
    Ok(sums)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let universe = mpi::initialize().ok_or("MPI was initialized already")?;
    let world = universe.world();
    let (rank, ranks) = (world.rank() as usize, world.size() as usize);
    let mut args = std::env::args().skip(1);
    let order: usize = args.next().map_or(Ok(256), |s| s.parse())?;
    let blocks: usize = args.next().map_or(Ok(4), |s| s.parse())?;

    let mut share = teamalg::share::mpi::node_share(&world);
    // For comparison only: MPI_HYBRID_THREADS=N overrides the share (as a rank that sized its
    // pool by the CPUs it sees would), and the check below then reports oversubscription.
    if let Some(n) = std::env::var("MPI_HYBRID_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        share.threads = n;
    }
    world.barrier();
    let start = std::time::Instant::now();
    let sums = if share.threads > 1 {
        let team = Pool::builder()
            .threads(share.threads)
            .build()?
            .into_team(share.threads)?;
        solve_blocks(rank, blocks, order, &team)?
    } else {
        solve_blocks(rank, blocks, order, &Exec::serial())?
    };

    let seconds = start.elapsed().as_secs_f64();
    let mut slowest = 0.0f64;
    world.all_reduce_into(&seconds, &mut slowest, SystemOperation::max());
    let mut total = [0.0f64; 2];
    world.all_reduce_into(&sums[..], &mut total[..], SystemOperation::sum());
    // Per rank: threads, workers teamalg started, mask CPUs, bound, node CPUs, ranks sharing.
    let mine = [
        share.threads as u64,
        teamalg::spawned_workers() as u64,
        share.mask_cpus as u64,
        u64::from(share.bound),
        share.node_cpus as u64,
        share.sharing as u64,
    ];
    let mut all = vec![0u64; mine.len() * ranks];
    world.all_gather_into(&mine[..], &mut all[..]);
    if rank != 0 {
        return Ok(());
    }
    let residual = (total[0] / total[1]).sqrt();
    let node_cpus = all.chunks(mine.len()).map(|r| r[4]).max().unwrap_or(1);
    println!(
        "mpi_hybrid: {ranks} ranks, {blocks} blocks of order {order} each, {node_cpus} CPUs on the node"
    );
    for (r, row) in all.chunks(mine.len()).enumerate() {
        let bound = if row[3] == 1 { "bound" } else { "unbound" };
        println!(
            "rank {r}: {} threads (mask {} CPUs, {bound}, shared by {}), {} workers started",
            row[0], row[2], row[5], row[1]
        );
    }
    let threads: u64 = all.chunks(mine.len()).map(|r| r[0]).sum();
    let started: u64 = all.chunks(mine.len()).map(|r| r[1]).sum();
    println!(
        "threads per rank, summed: {threads} of {node_cpus} CPUs; workers started, summed: {started}"
    );
    println!("relative residual ||A x - b|| / ||b||: {residual:.2e}");
    println!(
        "slowest rank's pool, factorizations and solves: {:.1} ms",
        slowest * 1e3
    );
    // One node here: every rank's threads count against the same CPUs.
    let ok = residual <= 1e-13 && threads <= node_cpus && started <= node_cpus;
    println!(
        "{}",
        if ok {
            "mpi_hybrid: OK"
        } else {
            "mpi_hybrid: FAILED"
        }
    );
    if !ok {
        std::process::exit(1);
    }
    Ok(())
}
