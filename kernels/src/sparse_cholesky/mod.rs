//! Sparse Cholesky, supernodal and left-looking, as faer's, with the elimination tree's
//! independent subtrees as the unit of parallel work (`docs/sparse-cholesky.md`). Built so far:
//! the analysis ([`tree`]: faer's symbolic analysis in a postorder of its tree, and the tree
//! beside it) and the serial step over a range of supernodes ([`numeric`]), which gives faer's
//! serial factor bit for bit. The subtrees' section, the gate's family and the facade are the
//! record's next steps.

pub mod numeric;
pub mod tree;
