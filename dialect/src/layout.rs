//! The `layout` attribute: which axis of a 4-D attention operand holds batch (B),
//! sequence (T), heads (N) and head dimension (H), as in `jax.nn`'s "BTNH".

use std::fmt;

/// One logical axis of an attention operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    Batch,
    Sequence,
    Heads,
    HeadDim,
}

impl Axis {
    pub const ALL: [Axis; 4] = [Axis::Batch, Axis::Sequence, Axis::Heads, Axis::HeadDim];

    fn letter(self) -> char {
        match self {
            Axis::Batch => 'B',
            Axis::Sequence => 'T',
            Axis::Heads => 'N',
            Axis::HeadDim => 'H',
        }
    }
}

/// A permutation of the four axes; `order[i]` is the axis stored at dimension `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    order: [Axis; 4],
}

impl Layout {
    pub const BTNH: Layout = Layout { order: Axis::ALL };
    pub const BNTH: Layout = Layout { order: [Axis::Batch, Axis::Heads, Axis::Sequence, Axis::HeadDim] };

    /// Parses a four-letter permutation of "BTNH".
    pub fn parse(text: &str) -> Option<Layout> {
        let letters: Vec<char> = text.chars().collect();
        if letters.len() != 4 {
            return None;
        }
        let mut order = [Axis::Batch; 4];
        for (slot, letter) in order.iter_mut().zip(&letters) {
            *slot = *Axis::ALL.iter().find(|axis| axis.letter() == *letter)?;
        }
        let distinct = Axis::ALL.iter().all(|axis| order.contains(axis));
        distinct.then_some(Layout { order })
    }

    /// The dimension index that holds `axis`.
    /// The layout with the axes in `order` (each exactly once).
    pub fn from_order(order: [Axis; 4]) -> Option<Layout> {
        Axis::ALL.iter().all(|axis| order.contains(axis)).then_some(Layout { order })
    }

    pub fn order(&self) -> [Axis; 4] {
        self.order
    }

    pub fn position(&self, axis: Axis) -> usize {
        self.order.iter().position(|a| *a == axis).expect("a layout holds every axis")
    }

    /// The dimension index of `axis` once the head-dimension axis is dropped (the layout
    /// of GDN's per-token gates `g` and `beta`).
    pub fn position_without_head_dim(&self, axis: Axis) -> usize {
        let position = self.position(axis);
        position - usize::from(self.position(Axis::HeadDim) < position)
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        self.order.iter().try_for_each(|axis| write!(f, "{}", axis.letter()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_permutations_and_rejects_the_rest() {
        assert_eq!(Layout::parse("BTNH"), Some(Layout::BTNH));
        assert_eq!(Layout::parse("BNTH"), Some(Layout::BNTH));
        assert_eq!(Layout::parse("HBNT").unwrap().to_string(), "HBNT");
        for bad in ["", "BTN", "BTNHX", "BTTH", "btnh", "BTNX"] {
            assert_eq!(Layout::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn positions() {
        let layout = Layout::BNTH;
        assert_eq!(layout.position(Axis::Sequence), 2);
        assert_eq!(layout.position_without_head_dim(Axis::Sequence), 2);
        let head_dim_first = Layout::parse("HBTN").unwrap();
        assert_eq!(head_dim_first.position_without_head_dim(Axis::Heads), 2);
        assert_eq!(head_dim_first.position_without_head_dim(Axis::Batch), 0);
    }
}
