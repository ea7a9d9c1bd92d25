//! Array element addresses, with the bounds checks of LANGUAGE.md section 9.

use acc_lang::ir::{Expr, ScalarType, SiteId, Ty};
use acc_runtime::abi::{ARRAY_DATA_OFFSET, ARRAY_DIMS_OFFSET, ARRAY_LEN_OFFSET, ARRAY_RANK_OFFSET};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};

use super::expr::scalar_of;
use super::{Tx, PTR};
use crate::JitError;

/// An array element whose array and indices are evaluated (indices as `i64`).
pub(super) struct Element {
    handle: Value,
    idx: Vec<Value>,
    pub elem: ScalarType,
}

/// Bytes per element (bool elements are one byte).
pub(super) fn elem_size(t: ScalarType) -> i64 {
    t.elem_type().size() as i64
}

/// Header fields never change once an array exists (its shape is fixed; `reshape` makes a new
/// header), so their loads may be merged and hoisted out of loops (`can_move`): a handle that
/// compiled code holds always points at a live header (the checker sees to it that array
/// variables are initialized before use, and lowering's reference counting keeps it alive).
fn header_flags() -> MemFlagsData {
    MemFlagsData::trusted().with_readonly().with_can_move()
}

impl Tx<'_, '_> {
    /// `len(a)`.
    pub(super) fn array_len(&mut self, a: Value) -> Value {
        self.b
            .ins()
            .load(types::I64, header_flags(), a, ARRAY_LEN_OFFSET)
    }

    /// `rank(a)` as an `i64`.
    pub(super) fn array_rank(&mut self, a: Value) -> Value {
        let r = self
            .b
            .ins()
            .load(types::I32, header_flags(), a, ARRAY_RANK_OFFSET);
        self.b.ins().uextend(types::I64, r)
    }

    /// The address of `array[indices]` and its element type. With a site, each index is
    /// checked against its extent (`0 <= i < dims[k]` as one unsigned compare) and a failure
    /// calls `acc_rt_bounds_error` and leaves the function.
    pub(super) fn element_addr(
        &mut self,
        array: &Expr,
        indices: &[Expr],
        site: Option<SiteId>,
    ) -> Result<(Value, ScalarType), JitError> {
        let element = self.element(array, indices)?;
        let addr = self.element_address(&element, site)?;
        Ok((addr, element.elem))
    }

    /// Evaluate the array and the indices of `array[indices]` (in that order), without checking
    /// anything yet.
    pub(super) fn element(&mut self, array: &Expr, indices: &[Expr]) -> Result<Element, JitError> {
        let Ty::Array { elem, rank } = array.ty else {
            return Err(JitError::Unsupported("indexing a scalar".into()));
        };
        if indices.len() != rank as usize || indices.is_empty() {
            return Err(JitError::Unsupported(format!(
                "{} indices for an array of rank {rank}",
                indices.len()
            )));
        }
        let handle = self.expr(array)?;
        let mut idx = Vec::with_capacity(indices.len());
        for i in indices {
            let v = self.expr(i)?;
            idx.push(match scalar_of(i, "an index")? {
                ScalarType::I64 => v,
                ScalarType::I32 => self.b.ins().sextend(types::I64, v),
                t => return Err(JitError::Unsupported(format!("index of type {}", t.name()))),
            });
        }
        Ok(Element { handle, idx, elem })
    }

    /// The address of an evaluated element, bounds-checked when there is a site.
    pub(super) fn element_address(
        &mut self,
        element: &Element,
        site: Option<SiteId>,
    ) -> Result<Value, JitError> {
        let (a, idx) = (element.handle, &element.idx);
        let mut dims = Vec::with_capacity(idx.len());
        for k in 0..idx.len() {
            // The first extent only matters to the bounds check.
            if k > 0 || site.is_some() {
                let offset = ARRAY_DIMS_OFFSET + 8 * k as i32;
                dims.push(Some(self.b.ins().load(
                    types::I64,
                    header_flags(),
                    a,
                    offset,
                )));
            } else {
                dims.push(None);
            }
        }
        if let Some(site) = site {
            self.bounds_checks(a, idx, &dims, site)?;
        }
        let mut linear = idx[0];
        for k in 1..idx.len() {
            let d = dims[k].expect("loaded above");
            let scaled = self.b.ins().imul(linear, d);
            linear = self.b.ins().iadd(scaled, idx[k]);
        }
        let size = elem_size(element.elem);
        let offset = if size == 1 {
            linear
        } else {
            let shift = self.iconst(types::I64, size.trailing_zeros() as i64);
            self.b.ins().ishl(linear, shift)
        };
        let data = self.b.ins().load(PTR, header_flags(), a, ARRAY_DATA_OFFSET);
        Ok(self.b.ins().iadd(data, offset))
    }

    /// One branch per access: the indices' unsigned compares are or-ed together, and the cold
    /// error path works out which dimension failed first.
    fn bounds_checks(
        &mut self,
        a: Value,
        idx: &[Value],
        dims: &[Option<Value>],
        site: SiteId,
    ) -> Result<(), JitError> {
        let mut outs = Vec::with_capacity(idx.len());
        for (&i, d) in idx.iter().zip(dims) {
            let d = d.expect("loaded when checked");
            outs.push(self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, d));
        }
        let mut any = outs[0];
        for &out in &outs[1..] {
            any = self.b.ins().bor(any, out);
        }
        let error = self.b.create_block();
        let ok = self.b.create_block();
        self.b.set_cold_block(error);
        self.b.ins().brif(any, error, &[], ok, &[]);

        self.b.switch_to_block(error);
        // The first failing dimension: scan from the last so that earlier ones win.
        let mut dim = self.iconst(types::I32, 0);
        let mut index = idx[0];
        for k in (0..idx.len()).rev() {
            let kv = self.iconst(types::I32, k as i64);
            dim = self.b.ins().select(outs[k], kv, dim);
            index = self.b.ins().select(outs[k], idx[k], index);
        }
        let site = self.site(Some(site));
        self.call_rt_and_fail("acc_rt_bounds_error", &[self.ctx, site, a, dim, index])?;
        self.b.switch_to_block(ok);
        Ok(())
    }
}
