//! Axis atoms: which parts of which source axes each axis of a tensor indexes, followed
//! through layout ops (transpose, reshape, broadcast).
//!
//! Every axis of a tensor is a list of atoms, major to minor; its coordinate is their
//! mixed-radix number. A source tensor starts with one fresh atom per axis. A reshape
//! regroups atoms, splitting one where a new axis boundary falls inside it; a split
//! refines the atom everywhere it appears. A broadcast adds atoms the data does not
//! depend on. Unifying atoms records that two tensors index the same thing (a dot's
//! contracted or batch axes), so the raising passes can name each atom's role (batch,
//! heads, query, key, head dimension) and check the whole dataflow is attention before
//! rewriting it.

use std::fmt;

pub type Atom = usize;

/// One axis of a tensor: its atoms, major to minor (none for a size-1 axis).
pub type Axis = Vec<Atom>;

#[derive(Clone, Debug)]
struct AtomData {
    size: i64,
    /// Made by a broadcast: the data does not vary along it.
    broadcast: bool,
    /// Union-find link; an atom is its own representative when `parent == itself`.
    parent: Atom,
    /// Set once the atom is split: its parts, major to minor.
    parts: Option<Vec<Atom>>,
}

/// Why a layout could not be followed or two axes do not match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch(pub String);

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn mismatch<T>(message: impl Into<String>) -> Result<T, Mismatch> {
    Err(Mismatch(message.into()))
}

#[derive(Clone, Debug, Default)]
pub struct Atoms {
    atoms: Vec<AtomData>,
}

impl Atoms {
    pub fn new() -> Atoms {
        Atoms::default()
    }

    fn fresh(&mut self, size: i64, broadcast: bool) -> Atom {
        let id = self.atoms.len();
        self.atoms.push(AtomData { size, broadcast, parent: id, parts: None });
        id
    }

    /// The axes of a tensor of `shape` whose data varies along every axis.
    pub fn source(&mut self, shape: &[i64]) -> Vec<Axis> {
        shape.iter().map(|&size| if size == 1 { Vec::new() } else { vec![self.fresh(size, false)] }).collect()
    }

    /// An axis of `size` the data does not vary along.
    pub fn broadcast_axis(&mut self, size: i64) -> Axis {
        if size == 1 {
            Vec::new()
        } else {
            vec![self.fresh(size, true)]
        }
    }

    pub fn find(&self, mut atom: Atom) -> Atom {
        while self.atoms[atom].parent != atom {
            atom = self.atoms[atom].parent;
        }
        atom
    }

    pub fn size(&self, atom: Atom) -> i64 {
        self.atoms[self.find(atom)].size
    }

    pub fn is_broadcast(&self, atom: Atom) -> bool {
        self.atoms[self.find(atom)].broadcast
    }

    /// The unsplit atoms an axis consists of, as representatives.
    pub fn leaves(&self, axis: &[Atom]) -> Vec<Atom> {
        let mut leaves = Vec::new();
        for &atom in axis {
            let atom = self.find(atom);
            match &self.atoms[atom].parts {
                Some(parts) => leaves.extend(self.leaves(&parts.clone())),
                None => leaves.push(atom),
            }
        }
        leaves
    }

    pub fn axis_size(&self, axis: &[Atom]) -> i64 {
        axis.iter().map(|&atom| self.size(atom)).product()
    }

    /// Splits a leaf into a major part of `major` and the minor rest.
    fn split(&mut self, atom: Atom, major: i64) -> (Atom, Atom) {
        let atom = self.find(atom);
        let data = self.atoms[atom].clone();
        debug_assert!(data.parts.is_none() && data.size % major == 0);
        let high = self.fresh(major, data.broadcast);
        let low = self.fresh(data.size / major, data.broadcast);
        self.atoms[atom].parts = Some(vec![high, low]);
        (high, low)
    }

    /// Regroups the atoms of `axes` (a tensor of that layout) into axes of `shape`, as a
    /// row-major reshape does.
    pub fn reshape(&mut self, axes: &[Axis], shape: &[i64]) -> Result<Vec<Axis>, Mismatch> {
        let mut pending: std::collections::VecDeque<Atom> =
            axes.iter().flat_map(|axis| self.leaves(axis)).filter(|&atom| self.size(atom) > 1).collect();
        let mut result = Vec::with_capacity(shape.len());
        for &size in shape {
            let mut axis = Vec::new();
            let mut filled = 1;
            while filled < size {
                let Some(atom) = pending.pop_front() else { return mismatch("reshape changes the element count") };
                let atom_size = self.size(atom);
                let needed = size / filled;
                if size % filled != 0 {
                    return mismatch("reshape boundaries do not line up");
                }
                if atom_size <= needed && needed % atom_size == 0 {
                    axis.push(atom);
                    filled *= atom_size;
                } else if atom_size > needed && atom_size % needed == 0 {
                    let (high, low) = self.split(atom, needed);
                    axis.push(high);
                    pending.push_front(low);
                    filled *= needed;
                } else {
                    return mismatch("reshape boundaries do not line up");
                }
            }
            result.push(axis);
        }
        if !pending.is_empty() {
            return mismatch("reshape changes the element count");
        }
        Ok(result)
    }

    /// Records that two axes index the same data: splits atoms until both sides line up,
    /// then identifies them pairwise. A broadcast atom matched with a data atom is not
    /// identified (one side simply does not vary there); `pair` says which.
    pub fn unify(&mut self, a: &[Atom], b: &[Atom]) -> Result<(), Mismatch> {
        self.pair(a, b).map(|_| ())
    }

    /// Lines up two axes like `unify` and returns the combined axis: for each position,
    /// the data atom (or the first side's, when both are data or both broadcast).
    pub fn pair(&mut self, a: &[Atom], b: &[Atom]) -> Result<Axis, Mismatch> {
        if self.axis_size(a) != self.axis_size(b) {
            return mismatch(format!("axes of size {} and {} cannot match", self.axis_size(a), self.axis_size(b)));
        }
        let mut left: std::collections::VecDeque<Atom> = self.leaves(a).into();
        let mut right: std::collections::VecDeque<Atom> = self.leaves(b).into();
        let mut combined = Vec::new();
        while let (Some(&x), Some(&y)) = (left.front(), right.front()) {
            let (sx, sy) = (self.size(x), self.size(y));
            let (x, y) = if sx == sy {
                left.pop_front();
                right.pop_front();
                (x, y)
            } else if sx > sy && sx % sy == 0 {
                left.pop_front();
                let (high, low) = self.split(x, sy);
                left.push_front(low);
                right.pop_front();
                (high, y)
            } else if sy > sx && sy % sx == 0 {
                right.pop_front();
                let (high, low) = self.split(y, sx);
                right.push_front(low);
                left.pop_front();
                (x, high)
            } else {
                return mismatch("axes split at incompatible boundaries");
            };
            let (x, y) = (self.find(x), self.find(y));
            match (self.atoms[x].broadcast, self.atoms[y].broadcast) {
                (false, true) => combined.push(x),
                (true, false) => combined.push(y),
                _ => {
                    if x != y {
                        self.atoms[y].parent = x;
                    }
                    combined.push(x);
                }
            }
        }
        Ok(combined)
    }

    /// Whether two axes are made of the same atoms (after splits), ignoring none.
    pub fn same(&self, a: &[Atom], b: &[Atom]) -> bool {
        self.leaves(a) == self.leaves(b)
    }
}

/// The axes after `transpose(permutation)`.
pub fn transpose(axes: &[Axis], permutation: &[i64]) -> Vec<Axis> {
    permutation.iter().map(|&p| axes[p as usize].clone()).collect()
}

/// The axes after `broadcast_in_dim(dimensions)` to `shape`.
pub fn broadcast_in_dim(atoms: &mut Atoms, axes: &[Axis], dimensions: &[i64], shape: &[i64]) -> Vec<Axis> {
    shape
        .iter()
        .enumerate()
        .map(|(position, &size)| match dimensions.iter().position(|&d| d as usize == position) {
            Some(input) if atoms.axis_size(&axes[input]) == size => axes[input].clone(),
            _ => atoms.broadcast_axis(size),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reshape_splits_and_merges() {
        let mut atoms = Atoms::new();
        let q = atoms.source(&[2, 8, 64]);
        // [2, 8, 64] -> [2, 2, 4, 64]: the heads axis splits into (2 major, 4 minor).
        let split = atoms.reshape(&q, &[2, 2, 4, 64]).unwrap();
        assert_eq!(atoms.leaves(&q[1]), [split[1][0], split[2][0]]);
        // And merging back gives the original axis.
        let merged = atoms.reshape(&split, &[2, 8, 64]).unwrap();
        assert!(atoms.same(&merged[1], &q[1]));
        assert!(atoms.reshape(&q, &[3, 7, 7]).is_err());
        // [4, 6] -> [8, 3]: the first axis takes all of the 4 and the major 2 of the 6,
        // the second the 3 left of it.
        let x = atoms.source(&[4, 6]);
        let regrouped = atoms.reshape(&x, &[8, 3]).unwrap();
        assert_eq!(regrouped[0][0], x[0][0]);
        assert_eq!(atoms.leaves(&x[1]), [regrouped[0][1], regrouped[1][0]]);
        assert_eq!((atoms.size(regrouped[0][1]), atoms.size(regrouped[1][0])), (2, 3));
    }

    #[test]
    fn repeat_interleave_pairs_with_grouped_heads() {
        let mut atoms = Atoms::new();
        // k: [T, 2 heads]; jnp.repeat(k, 4, axis=1) = broadcast to [T, 2, 4] then reshape.
        let k = atoms.source(&[16, 2]);
        let repeated = broadcast_in_dim(&mut atoms, &k, &[0, 1], &[16, 2, 4]);
        let repeated = atoms.reshape(&repeated, &[16, 8]).unwrap();
        let q = atoms.source(&[16, 8]);
        let heads = atoms.pair(&q[1], &repeated[1]).unwrap();
        // q's heads split into (kv head = k's head, group); the group is q's own.
        assert_eq!(heads.len(), 2);
        assert_eq!(atoms.find(heads[0]), atoms.find(k[1][0]));
        assert!(!atoms.is_broadcast(heads[1]));
        assert_eq!(atoms.leaves(&q[1]), heads);
    }

    #[test]
    fn transposes_and_broadcasts() {
        let mut atoms = Atoms::new();
        let x = atoms.source(&[3, 5]);
        let t = transpose(&x, &[1, 0]);
        assert_eq!(t, vec![x[1].clone(), x[0].clone()]);
        let b = broadcast_in_dim(&mut atoms, &x, &[0, 2], &[3, 7, 5]);
        assert!(atoms.is_broadcast(b[1][0]));
        assert_eq!(b[2], x[1]);
        assert!(atoms.pair(&x[0], &x[1]).is_err());
    }
}
