//! Writes the PTX of each `.acc` file of a directory, and a JSON description of its kernels'
//! parameters, for the GPU harness `jit-ptx/gpu/run.py`:
//! `cargo run -p acc-jit-ptx --example gpu_cases -- jit-ptx/gpu/cases OUT_DIR`.

use acc_jit_ptx::{emit_module, CopyLevel, DevicePrint, PrintPiece, PtxOptions};
use acc_lang::builtins::{FormatArg, FormatPiece};
use acc_lang::ir::{Pass, Ty};
use acc_lang::span::SourceFile;

fn ty_json(t: Ty) -> String {
    match t {
        Ty::Scalar(s) => format!("{{\"scalar\": \"{}\"}}", s.name()),
        Ty::Array { elem, rank } => format!("{{\"elem\": \"{}\", \"rank\": {rank}}}", elem.name()),
    }
}

fn pass_name(p: Pass) -> &'static str {
    match p {
        Pass::Value => "value",
        Pass::InOut => "inout",
        Pass::Private => "private",
        Pass::Array => "array",
        Pass::PrivateArray => "private_array",
        Pass::FirstPrivateArray => "firstprivate_array",
    }
}

/// A print statement's description (print id = its index; the module is numbered from 0):
/// `{"kind": "print" | "printf", "text": what it prints with `{}` for each value, "slots":
/// [the type of each value slot: a scalar type's name for `print`, "int" or "float" for
/// `printf`]}`.
fn print_json(p: &DevicePrint) -> String {
    let (kind, mut text, mut slots) = ("print", String::new(), Vec::new());
    let kind = match p {
        DevicePrint::Print(pieces) => {
            for piece in pieces {
                match piece {
                    PrintPiece::Text(t) => text += t,
                    PrintPiece::Value(s) => {
                        text += "{}";
                        slots.push(format!("\"{}\"", s.name()));
                    }
                }
            }
            kind
        }
        DevicePrint::Printf(pieces) => {
            for piece in pieces {
                match piece {
                    FormatPiece::Text(t) => text += t,
                    FormatPiece::Spec(s) => {
                        text += "{}";
                        let float = matches!(s.arg(), FormatArg::Float);
                        slots.push(if float { "\"float\"" } else { "\"int\"" }.to_string());
                    }
                }
            }
            "printf"
        }
    };
    format!(
        "{{\"kind\": \"{kind}\", \"text\": {text:?}, \"slots\": [{}]}}",
        slots.join(", ")
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(out)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: gpu_cases CASES_DIR OUT_DIR");
        std::process::exit(2);
    };
    std::fs::create_dir_all(out).expect("output directory");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("cases directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "acc"))
        .collect();
    files.sort();
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).expect("readable");
        let source = SourceFile::new(name.as_str(), text.as_str());
        let module = match acc_lang::lower_source(&source) {
            Ok(m) => m,
            Err(d) => {
                eprintln!("{name}: {} compile errors", d.len());
                std::process::exit(1);
            }
        };
        let ptx = emit_module(&module, &PtxOptions::default());
        std::fs::write(format!("{out}/{name}.ptx"), &ptx.text).expect("write");
        let mut kernels = Vec::new();
        for k in &ptx.kernels {
            let r = module.regions.iter().find(|r| r.id == k.region).unwrap();
            let params: Vec<String> = r
                .params
                .iter()
                .map(|p| {
                    format!(
                        "{{\"name\": \"{}\", \"pass\": \"{}\", \"ty\": {}}}",
                        p.name,
                        pass_name(p.pass),
                        ty_json(p.ty)
                    )
                })
                .collect();
            let reds: Vec<String> = r
                .reductions
                .iter()
                .map(|x| {
                    format!(
                        "{{\"op\": \"{}\", \"ty\": \"{}\", \"param\": {}}}",
                        x.reduction.op.as_str(),
                        x.reduction.ty.name(),
                        x.param
                    )
                })
                .collect();
            let globals: Vec<String> = k
                .globals
                .iter()
                .map(|g| {
                    let name = module
                        .globals
                        .iter()
                        .find(|x| x.id == *g)
                        .map_or("?", |x| &x.name);
                    format!("\"{name}\"")
                })
                .collect();
            let private: Vec<String> = k
                .launch
                .private_arrays
                .iter()
                .map(|p| {
                    let level = match p.level {
                        CopyLevel::Gang => "gang",
                        CopyLevel::Worker => "worker",
                        CopyLevel::Vector => "vector",
                    };
                    format!(
                        "{{\"param\": {}, \"rank\": {}, \"elem_bytes\": {}, \"level\": \"{level}\", \"first\": {}}}",
                        p.param, p.rank, p.elem_bytes, p.first
                    )
                })
                .collect();
            let arrays: Vec<String> = k
                .launch
                .arrays
                .iter()
                .map(|a| format!("{{\"param\": {}, \"rank\": {}}}", a.param, a.rank))
                .collect();
            kernels.push(format!(
                "{{\"region\": {}, \"name\": \"{}\", \"one_gang\": {}, \"shared_per_thread\": {}, \"params\": [{}], \"reductions\": [{}], \"globals\": [{}], \"private\": [{}], \"arrays\": [{}], \"prints\": {}, \"split\": {}}}",
                k.region.0,
                k.name,
                k.launch.one_gang,
                k.launch.shared_per_thread,
                params.join(", "),
                reds.join(", "),
                globals.join(", "),
                private.join(", "),
                arrays.join(", "),
                k.prints,
                k.launch.split
            ));
        }
        let unsupported: Vec<String> = ptx
            .unsupported
            .iter()
            .map(|(id, why)| format!("[{}, {:?}]", id.0, why))
            .collect();
        let sites: Vec<String> = module
            .sites
            .iter()
            .enumerate()
            .map(|(i, s)| format!("[{}, {:?}]", module.first_site as usize + i, s.what))
            .collect();
        let prints: Vec<String> = ptx.prints.iter().map(print_json).collect();
        std::fs::write(
            format!("{out}/{name}.json"),
            format!(
                "{{\"kernels\": [{}], \"unsupported\": [{}], \"sites\": [{}], \"prints\": [{}]}}\n",
                kernels.join(",\n"),
                unsupported.join(", "),
                sites.join(", "),
                prints.join(",\n")
            ),
        )
        .expect("write");
        eprintln!(
            "{name}: {} kernels, {} unsupported",
            ptx.kernels.len(),
            ptx.unsupported.len()
        );
    }
}
