//! A process's share of its node, for running several processes per node (MPI ranks, batch
//! job steps), each with its own pool: how many threads one process may run so that the
//! processes together start no more threads than the node has CPUs. Design record:
//! `docs/scale.md`.

use crate::runtime::cpus::CpuSet;

/// One process's share of its node: what [`node_share`] (or, with the `mpi` feature,
/// `share::mpi::node_share`) decided, and from what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeShare {
    /// Threads this process may run: the width of its team or the budget of its tokens, its
    /// own thread included. Its part of its mask, or of the cgroup's CPU quota where that is
    /// smaller (see [`available_cpus`](crate::available_cpus)).
    pub threads: usize,
    /// CPUs in this process's affinity mask.
    pub mask_cpus: usize,
    /// CPUs online on the node.
    pub node_cpus: usize,
    /// Whether the launcher bound the process (its mask is smaller than the node).
    pub bound: bool,
    /// The processes on the node whose mask equals this one's, this one among them.
    pub sharing: usize,
}

/// The CPUs online on this node (at least one), whatever the calling thread's mask.
pub fn node_cpus() -> usize {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `sysconf` reads a system value and has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        if n > 0 {
            return n as usize;
        }
    }
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `cpus` split among `sharing` processes: process `index` gets an equal part, the first
/// `cpus % sharing` one more, and every process at least one.
pub(crate) fn split(cpus: usize, sharing: usize, index: usize) -> usize {
    let sharing = sharing.max(1);
    let part = cpus / sharing + usize::from(index < cpus % sharing);
    part.max(1)
}

/// The share of a process that knows its place among the processes on its node
/// (`local_rank` of `local_ranks`, as a launcher tells it: `OMPI_COMM_WORLD_LOCAL_RANK` and
/// `OMPI_COMM_WORLD_LOCAL_SIZE` under Open MPI, `SLURM_LOCALID` and the tasks per node under
/// Slurm). A process the launcher bound to fewer CPUs than the node has takes its mask as its
/// own; an unbound one takes its part of the node. Processes bound to one common set (a
/// socket, say) should use `share::mpi::node_share` (feature `mpi`), which counts who shares
/// each mask.
///
/// ```
/// let share = teamalg::share::node_share(0, 1);
/// // Alone on the node: all of its mask.
/// assert_eq!(share.threads, teamalg::available_cpus());
/// ```
pub fn node_share(local_rank: usize, local_ranks: usize) -> NodeShare {
    let mine = CpuSet::current();
    let node = node_cpus();
    if mine.count() < node {
        // Bound: the mask is this process's own.
        share_among(&[mine], 0, node)
    } else {
        // Unbound: every process on the node has this mask.
        let ranks = local_ranks.max(1);
        share_among(&vec![mine; ranks], local_rank.min(ranks - 1), node)
    }
}

/// The share among processes whose masks are `masks` (one per process on the node, in rank
/// order), for process `me`: the processes with the same mask split it.
pub(crate) fn share_among(masks: &[CpuSet], me: usize, node: usize) -> NodeShare {
    let mine = &masks[me];
    let sharing = masks.iter().filter(|m| *m == mine).count();
    let index = masks[..me].iter().filter(|m| *m == mine).count();
    let mask = mine.count();
    let node = node.max(mask);
    // A cgroup CPU quota smaller than the mask is what the processes sharing the mask share
    // (they run in one container as they run on one mask).
    let usable = crate::runtime::quota::cpus().map_or(mask, |q| mask.min(q));
    NodeShare {
        threads: split(usable, sharing, index),
        mask_cpus: mask,
        node_cpus: node,
        bound: mask < node,
        sharing,
    }
}

/// The share of an MPI rank, found with a shared-memory communicator (feature `mpi`).
#[cfg(feature = "mpi")]
pub mod mpi {
    use ::mpi::topology::Communicator;
    use ::mpi::traits::CommunicatorCollectives;

    use super::{node_cpus, share_among, NodeShare};
    use crate::runtime::cpus::CpuSet;

    /// This rank's share of its node. Collective over `comm`: every rank of `comm` calls it.
    /// The ranks on one node (split by shared memory) exchange their affinity masks; ranks
    /// with the same mask split it, so unbound ranks split the node and ranks bound to one
    /// socket split the socket.
    pub fn node_share<C: Communicator>(comm: &C) -> NodeShare {
        let node = comm.split_shared(comm.rank());
        let local = node.size() as usize;
        let me = node.rank() as usize;
        let words = CpuSet::current().words();
        let mut all = vec![0u64; words.len() * local];
        node.all_gather_into(&words[..], &mut all[..]);
        let masks: Vec<CpuSet> = all.chunks(words.len()).map(CpuSet::from_words).collect();
        share_among(&masks, me, node_cpus())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(cpus: &[u32]) -> CpuSet {
        let mut words = [0u64; 16];
        for &c in cpus {
            words[c as usize / 64] |= 1 << (c % 64);
        }
        CpuSet::from_words(&words)
    }

    #[test]
    fn split_gives_the_remainder_to_the_first() {
        assert_eq!(
            (0..3).map(|i| split(8, 3, i)).collect::<Vec<_>>(),
            [3, 3, 2]
        );
        assert_eq!(split(2, 4, 3), 1, "at least one each");
        assert_eq!(split(16, 1, 0), 16);
        assert_eq!(split(4, 0, 0), 4, "no sharers counts as one");
    }

    #[test]
    fn unbound_ranks_split_the_node() {
        let all = set(&[0, 1, 2, 3, 4, 5, 6, 7]);
        let masks = vec![all.clone(), all.clone(), all];
        let shares: Vec<_> = (0..3).map(|r| share_among(&masks, r, 8)).collect();
        assert_eq!(shares.iter().map(|s| s.threads).sum::<usize>(), 8);
        assert!(shares.iter().all(|s| !s.bound && s.sharing == 3));
    }

    #[test]
    fn bound_ranks_take_their_mask() {
        let masks = vec![set(&[0, 1]), set(&[2, 3, 4]), set(&[5])];
        let threads: Vec<_> = (0..3).map(|r| share_among(&masks, r, 8).threads).collect();
        assert_eq!(threads, [2, 3, 1]);
        assert!(share_among(&masks, 1, 8).bound);
    }

    #[test]
    fn ranks_on_one_socket_split_it() {
        let socket0 = set(&[0, 1, 2, 3]);
        let socket1 = set(&[4, 5, 6, 7]);
        let masks = vec![socket0.clone(), socket0, socket1.clone(), socket1];
        let threads: Vec<_> = (0..4).map(|r| share_among(&masks, r, 8).threads).collect();
        assert_eq!(threads, [2, 2, 2, 2]);
    }

    #[test]
    fn a_process_alone_takes_its_mask() {
        let share = node_share(0, 1);
        assert_eq!(share.threads, crate::available_cpus());
        assert!(share.threads <= share.mask_cpus);
        // Several unbound processes never take more than the node together.
        if !share.bound {
            let ranks = share.node_cpus + 1;
            let total: usize = (0..ranks).map(|r| node_share(r, ranks).threads).sum();
            assert_eq!(total, ranks, "one each when ranks outnumber CPUs");
        }
    }
}
