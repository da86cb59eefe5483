//! How a token's budget is split among the children of a fork.

/// Budgets of the children of a `fork_sized` with fewer jobs than `budget`, into `out`: the
/// budget divided in proportion to `shares` (a share of 0 counts as 1), each child at least
/// one slot, summing to `budget`. Each child gets its quota rounded down (at least 1); slots
/// left over go to the children furthest below their quota, and slots taken back (when the
/// minimum of 1 overshot) from those furthest above it; ties go to the earlier child.
/// So `[1, 3]` on 4 gives `[1, 3]`, and every split that is exact in integers is kept exactly.
pub(super) fn sized_budgets(budget: usize, shares: &[usize], out: &mut [usize]) {
    let n = shares.len();
    debug_assert!(n <= budget && out.len() == n);
    // Quotas in units of 1/total. Shares are scaled down to 32 bits so the sums and products
    // stay far inside i128.
    let top = shares.iter().copied().max().unwrap_or(1).max(1);
    let shift = (usize::BITS - top.leading_zeros()).saturating_sub(32);
    let weight = |j: usize| i128::from(((shares[j] >> shift).max(1)) as u64);
    let total: i128 = (0..n).map(weight).sum();
    let b = budget as i128;
    // How far child j's budget `a` lies above its quota, times `total`.
    let over = |j: usize, a: usize| a as i128 * total - b * weight(j);
    for (j, o) in out.iter_mut().enumerate() {
        *o = ((b * weight(j) / total) as usize).max(1);
    }
    let mut sum: usize = out.iter().sum();
    while sum > budget {
        let j = (0..n)
            .filter(|&j| out[j] > 1)
            .max_by_key(|&j| over(j, out[j]))
            .expect("n <= budget leaves a child above 1");
        out[j] -= 1;
        sum -= 1;
    }
    while sum < budget {
        let j = (0..n)
            .min_by_key(|&j| over(j, out[j]))
            .expect("at least one child");
        out[j] += 1;
        sum += 1;
    }
}

/// Budget of child `i` of `jobs` under `budget`: equal shares, the remainder to the first.
#[inline]
pub(super) fn child_budget(budget: usize, jobs: usize, i: usize) -> usize {
    if jobs >= budget {
        1
    } else {
        budget / jobs + usize::from(i < budget % jobs)
    }
}

