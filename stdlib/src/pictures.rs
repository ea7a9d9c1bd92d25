//! `imshow(a[, "file.png"])` and `plot([x,] y[, "file.png"])`: the arrays are drawn by
//! `acc-plot`; the picture then goes to the embedding program's display when it set one and
//! the call names no file, and to a file otherwise (the named one, or `acc-plot-N.png`,
//! numbered per engine), whose name is printed as a line of the run's output. Paths are
//! relative to the current directory.

use acc_plot::{PlotError, Png, Values};
use acc_runtime::abi::{
    string_arg, ArrayHeader, Ctx, ELEM_BOOL, ELEM_F32, ELEM_F64, ELEM_I32, ELEM_I64,
};
use acc_runtime::array;
use acc_runtime::host::{fail, guarded, host_state};
use acc_runtime::{Picture, RunErrorKind};

use crate::arrays::symbol_list;

/// `imshow(a[, path])`: `a` is a rank-2 array; `path` is null for none.
///
/// # Safety
/// `ctx` is a live context, `a` a live rank-2 array, `path` null or `path_len` bytes.
pub unsafe extern "C" fn acc_imshow(
    ctx: *mut Ctx,
    a: *mut ArrayHeader,
    path: *const u8,
    path_len: usize,
) {
    guarded(ctx, None, || {
        let drawn = match array::shape(a) {
            &[rows, cols] => values(a).and_then(|v| {
                acc_plot::heat_map(v, rows.max(0) as usize, cols.max(0) as usize)
                    .map_err(|e| plot_error(e, "imshow"))
            }),
            shape => Err(RunErrorKind::Internal {
                message: format!("`imshow` of an array of rank {}", shape.len()),
            }),
        };
        deliver(ctx, drawn, path, path_len);
    })
}

/// `plot([x,] y[, path])`: `x` is null for `plot(y)`; `path` is null for none.
///
/// # Safety
/// As `acc_imshow`, with `x` null or a live rank-1 array and `y` a live rank-1 array.
pub unsafe extern "C" fn acc_plot(
    ctx: *mut Ctx,
    x: *mut ArrayHeader,
    y: *mut ArrayHeader,
    path: *const u8,
    path_len: usize,
) {
    guarded(ctx, None, || {
        let xs = if x.is_null() {
            Ok(None)
        } else {
            values(x).map(Some)
        };
        let drawn = xs.and_then(|xs| {
            let ys = values(y)?;
            acc_plot::line_plot(xs, ys).map_err(|e| plot_error(e, "plot"))
        });
        deliver(ctx, drawn, path, path_len);
    })
}

/// An array's elements as the plotter reads them.
unsafe fn values<'a>(a: *const ArrayHeader) -> Result<Values<'a>, RunErrorKind> {
    let h = &*a;
    if h.len <= 0 {
        // No elements to point at (the data pointer of an empty array may be null).
        return Ok(Values::F64(&[]));
    }
    Ok(match h.elem {
        ELEM_F64 => Values::F64(array::elements(a)),
        ELEM_F32 => Values::F32(array::elements(a)),
        ELEM_I64 => Values::I64(array::elements(a)),
        ELEM_I32 => Values::I32(array::elements(a)),
        ELEM_BOOL => Values::Bool(std::slice::from_raw_parts(h.data, h.len as usize)),
        code => {
            return Err(RunErrorKind::Internal {
                message: format!("an array of element code {code}"),
            })
        }
    })
}

/// A drawing error in the words of the call that failed.
fn plot_error(e: PlotError, function: &str) -> RunErrorKind {
    match e {
        PlotError::Empty => RunErrorKind::Picture {
            message: format!("`{function}` of an empty array: there is nothing to draw"),
            help: Some("check the array's size before drawing it: `if len(a) > 0 { … }`".into()),
        },
        PlotError::Lengths { x, y } => RunErrorKind::Picture {
            message: format!(
                "`plot(x, y)`: x has {x} elements but y has {y}: each y is drawn at its x"
            ),
            help: Some("give x and y one length, or draw y against 0, 1, …: `plot(y)`".into()),
        },
        PlotError::Render(why) => RunErrorKind::Internal {
            message: format!("`{function}`: {why}"),
        },
    }
}

/// Sends a drawn picture where it goes (see the module doc), or records the error.
unsafe fn deliver(
    ctx: *mut Ctx,
    drawn: Result<Png, RunErrorKind>,
    path: *const u8,
    path_len: usize,
) {
    let png = match drawn {
        Ok(png) => png,
        Err(kind) => return fail(ctx, kind, None),
    };
    let host = host_state(ctx);
    let picture = Picture::new(png.bytes, png.width, png.height);
    let name = if path.is_null() {
        if let Some(display) = host.pictures().display() {
            display(picture);
            return;
        }
        host.pictures().next_file_name()
    } else {
        string_arg(path, path_len).into_owned()
    };
    match std::fs::write(&name, &picture.png) {
        Ok(()) => host.write_str(&format!("wrote {name}\n")),
        Err(e) => fail(ctx, write_error(&name, &e), None),
    }
}

fn write_error(name: &str, e: &std::io::Error) -> RunErrorKind {
    let help = match e.kind() {
        std::io::ErrorKind::NotFound => {
            "the folder must exist: paths are relative to the current directory"
        }
        std::io::ErrorKind::PermissionDenied => "choose a folder you may write to",
        _ => "choose another file name",
    };
    RunErrorKind::Picture {
        message: format!("cannot write the picture to `{name}`: {e}"),
        help: Some(help.into()),
    }
}

pub fn symbols() -> Vec<(&'static str, *const u8)> {
    symbol_list![acc_imshow acc_plot]
}
