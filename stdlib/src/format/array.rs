//! `print` of an array: `[1.0, 2.0, 3.0]`; rank 2 and up nest brackets with one innermost row
//! per line, each line indented to sit under the first row; a dimension longer than
//! `ELIDE_ABOVE` shows its first and last `EDGE` entries around `...` (for an outer dimension,
//! `...` stands on a line of its own, as numpy prints it).
//!
//! ```text
//! [[0, 0, 0],
//!  [0, 0, 5]]
//! ```

/// Dimensions longer than this are elided (one number for the library and the REPL's display).
pub const ELIDE_ABOVE: usize = acc_lang::builtins::PRINT_ELIDE_ABOVE;
/// Entries shown at each end of an elided dimension.
pub const EDGE: usize = 3;

/// An array to print: its extents and a writer of element `i` (row-major index).
pub struct ArrayElems<'a> {
    pub shape: &'a [usize],
    pub write: &'a dyn Fn(&mut String, usize),
}

/// The text of an array (a rank-0 shape prints as `[]`).
pub fn array(a: &ArrayElems) -> String {
    let mut out = String::new();
    if a.shape.is_empty() {
        out.push_str("[]");
    } else {
        block(&mut out, a, 0, 0, 0);
    }
    out
}

/// Dimension `dim` of the block starting at element `offset`, `dim + 1` brackets deep.
fn block(out: &mut String, a: &ArrayElems, dim: usize, offset: usize, depth: usize) {
    let n = a.shape[dim];
    let innermost = dim + 1 == a.shape.len();
    let stride: usize = a.shape[dim + 1..].iter().product();
    out.push('[');
    for (k, entry) in visible(n).enumerate() {
        if k > 0 {
            if innermost {
                out.push_str(", ");
            } else {
                out.push_str(",\n");
                out.extend(std::iter::repeat_n(' ', depth + 1));
            }
        }
        match entry {
            None => out.push_str("..."),
            Some(i) if innermost => (a.write)(out, offset + i),
            Some(i) => block(out, a, dim + 1, offset + i * stride, depth + 1),
        }
    }
    out.push(']');
}

/// The entries of a dimension of extent `n` that are shown; `None` is the `...`.
fn visible(n: usize) -> impl Iterator<Item = Option<usize>> {
    let elide = n > ELIDE_ABOVE;
    let head = if elide { EDGE } else { n };
    let tail = if elide { n - EDGE..n } else { n..n };
    (0..head)
        .map(Some)
        .chain(elide.then_some(None))
        .chain(tail.map(Some))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(shape: &[usize]) -> String {
        let write = |out: &mut String, i: usize| out.push_str(&i.to_string());
        array(&ArrayElems {
            shape,
            write: &write,
        })
    }

    #[test]
    fn rank_one() {
        assert_eq!(ints(&[3]), "[0, 1, 2]");
        assert_eq!(ints(&[1]), "[0]");
        assert_eq!(ints(&[0]), "[]");
        assert_eq!(ints(&[10]), "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]");
        assert_eq!(ints(&[11]), "[0, 1, 2, ..., 8, 9, 10]");
        assert_eq!(ints(&[12]), "[0, 1, 2, ..., 9, 10, 11]");
        assert_eq!(ints(&[1000000]), "[0, 1, 2, ..., 999997, 999998, 999999]");
    }

    #[test]
    fn floats_use_the_element_writer() {
        let values = [1.0, 2.0, 3.0];
        let write = |out: &mut String, i: usize| super::super::push_f64(out, values[i]);
        let text = array(&ArrayElems {
            shape: &[3],
            write: &write,
        });
        assert_eq!(text, "[1.0, 2.0, 3.0]");
    }

    #[test]
    fn rank_two_rows_aligned() {
        assert_eq!(ints(&[2, 3]), "[[0, 1, 2],\n [3, 4, 5]]");
        assert_eq!(ints(&[1, 1]), "[[0]]");
        assert_eq!(ints(&[3, 1]), "[[0],\n [1],\n [2]]");
        assert_eq!(ints(&[0, 3]), "[]");
        assert_eq!(ints(&[2, 0]), "[[],\n []]");
    }

    #[test]
    fn rank_two_elided_rows_and_columns() {
        let want = "\
[[0, 1, 2, ..., 9, 10, 11],
 [12, 13, 14, ..., 21, 22, 23],
 [24, 25, 26, ..., 33, 34, 35],
 ...,
 [156, 157, 158, ..., 165, 166, 167],
 [168, 169, 170, ..., 177, 178, 179],
 [180, 181, 182, ..., 189, 190, 191]]";
        assert_eq!(ints(&[16, 12]), want);
    }

    #[test]
    fn rank_three_nests() {
        let want = "\
[[[0, 1],
  [2, 3]],
 [[4, 5],
  [6, 7]]]";
        assert_eq!(ints(&[2, 2, 2]), want);
    }

    #[test]
    fn rank_three_elided_blocks() {
        let text = ints(&[11, 1, 2]);
        let want = "\
[[[0, 1]],
 [[2, 3]],
 [[4, 5]],
 ...,
 [[16, 17]],
 [[18, 19]],
 [[20, 21]]]";
        assert_eq!(text, want);
    }

    #[test]
    fn rank_six() {
        assert_eq!(ints(&[1, 1, 1, 1, 1, 2]), "[[[[[[0, 1]]]]]]");
        assert_eq!(ints(&[1, 1, 1, 1, 2, 1]), "[[[[[[0],\n     [1]]]]]]");
    }
}
