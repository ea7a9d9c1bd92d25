//! Print the PTX of a script's regions: `cargo run -p acc-jit-ptx --example dump_ptx FILE.acc`.

use acc_jit_ptx::{emit_module, PtxOptions};
use acc_lang::span::SourceFile;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: dump_ptx FILE.acc [--unchecked] [--ir]");
        std::process::exit(2);
    };
    let unchecked = std::env::args().any(|a| a == "--unchecked");
    let text = std::fs::read_to_string(&path).expect("readable file");
    let source = SourceFile::new(path.as_str(), text.as_str());
    let module = match acc_lang::lower_source(&source) {
        Ok(m) => m,
        Err(d) => {
            eprintln!("{} errors", d.len());
            std::process::exit(1);
        }
    };
    if std::env::args().any(|a| a == "--ir") {
        print!("{module}");
        return;
    }
    let ptx = emit_module(&module, &PtxOptions { unchecked });
    print!("{}", ptx.text);
    for k in &ptx.kernels {
        eprintln!("kernel {:?}", k);
    }
    for (id, why) in &ptx.unsupported {
        eprintln!("unsupported region {}: {why}", id.0);
    }
}
