//! The program tree the generator builds and the shrinker edits.
//!
//! A program is a list of statement [`Node`]s. A node is one source line (made of text and
//! expressions), optional directive lines printed before it, and an optional block body. The
//! shrinker only needs two kinds of edits, so the tree is shaped for them: a node marked
//! `removable` may be deleted (the generator marks only nodes whose removal keeps the program
//! race-free and correct on a discrete device), and an expression not marked `frozen` may be
//! replaced by a literal of its type or by one of its operands of the same type.

use std::fmt::Write;

/// The scalar types of acc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    Bool,
    I32,
    I64,
    F32,
    F64,
}

impl Ty {
    pub fn name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::I32 => "i32",
            Ty::I64 => "i64",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
        }
    }

    pub fn is_int(self) -> bool {
        matches!(self, Ty::I32 | Ty::I64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }

    /// A literal of exactly this type, whatever its context (suffixed, so that replacing an
    /// expression by it never changes the type of a `let`).
    pub fn literal(self, v: i64) -> String {
        if v < 0 {
            return format!("({})", self.literal_text(v));
        }
        self.literal_text(v)
    }

    fn literal_text(self, v: i64) -> String {
        match self {
            Ty::Bool => (v != 0).to_string(),
            Ty::I32 => format!("{v}i32"),
            Ty::I64 => format!("{v}i64"),
            Ty::F32 => format!("{v}.0f32"),
            Ty::F64 => format!("{v}.0f64"),
        }
    }
}

/// An expression: text pieces interleaved with sub-expressions (`parts.len() == kids.len() + 1`).
#[derive(Clone, Debug)]
pub struct Expr {
    pub id: u32,
    pub ty: Ty,
    /// Never replaced itself (wrappers that keep indices in bounds and divisors non-zero); its
    /// operands still may be.
    pub frozen: bool,
    pub parts: Vec<String>,
    pub kids: Vec<Expr>,
}

impl Expr {
    pub fn print(&self, out: &mut String) {
        for (i, p) in self.parts.iter().enumerate() {
            out.push_str(p);
            if let Some(k) = self.kids.get(i) {
                k.print(out);
            }
        }
    }

    pub fn text(&self) -> String {
        let mut s = String::new();
        self.print(&mut s);
        s
    }
}

/// A piece of a statement line.
#[derive(Clone, Debug)]
pub enum Piece {
    T(String),
    E(Expr),
}

/// One statement.
#[derive(Clone, Debug)]
pub struct Node {
    pub id: u32,
    /// Directive lines that belong to this statement (`acc atomic`, `acc parallel loop …`).
    pub pre: Vec<String>,
    pub line: Vec<Piece>,
    /// A block body, printed in braces; with `group` the children are printed inline instead
    /// (a unit of statements that the shrinker may delete as a whole).
    pub body: Option<Vec<Node>>,
    pub group: bool,
    pub removable: bool,
}

impl Node {
    pub fn print(&self, indent: usize, out: &mut String) {
        if self.group {
            for c in self.body.iter().flatten() {
                c.print(indent, out);
            }
            return;
        }
        let pad = "    ".repeat(indent);
        for p in &self.pre {
            let _ = writeln!(out, "{pad}{p}");
        }
        let mut line = String::new();
        for p in &self.line {
            match p {
                Piece::T(t) => line.push_str(t),
                Piece::E(e) => e.print(&mut line),
            }
        }
        match &self.body {
            None => {
                let _ = writeln!(out, "{pad}{line}");
            }
            Some(body) => {
                let open = if line.is_empty() {
                    "{".to_string()
                } else {
                    format!("{line} {{")
                };
                let _ = writeln!(out, "{pad}{open}");
                for c in body {
                    c.print(indent + 1, out);
                }
                let _ = writeln!(out, "{pad}}}");
            }
        }
    }
}

/// A whole program.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub header: String,
    pub nodes: Vec<Node>,
}

impl Program {
    pub fn source(&self) -> String {
        let mut out = self.header.clone();
        for n in &self.nodes {
            n.print(0, &mut out);
        }
        out
    }

    /// Ids of every removable node, outermost first.
    pub fn removable_ids(&self) -> Vec<u32> {
        fn walk(n: &Node, ids: &mut Vec<u32>) {
            if n.removable {
                ids.push(n.id);
            }
            for c in n.body.iter().flatten() {
                walk(c, ids);
            }
        }
        let mut ids = Vec::new();
        for n in &self.nodes {
            walk(n, &mut ids);
        }
        ids
    }

    /// The program without the nodes whose ids are in `dead`.
    pub fn without(&self, dead: &[u32]) -> Program {
        fn keep(nodes: &[Node], dead: &[u32]) -> Vec<Node> {
            nodes
                .iter()
                .filter(|n| !dead.contains(&n.id))
                .map(|n| {
                    let mut n = n.clone();
                    if let Some(b) = &n.body {
                        n.body = Some(keep(b, dead));
                    }
                    n
                })
                .collect()
        }
        Program {
            header: self.header.clone(),
            nodes: keep(&self.nodes, dead),
        }
    }

    /// Every expression simplification: (expression id, replacement), simplest first.
    pub fn expr_edits(&self) -> Vec<(u32, Expr)> {
        fn expr(e: &Expr, out: &mut Vec<(u32, Expr)>) {
            if !e.frozen && !e.kids.is_empty() {
                let lit = Expr {
                    id: e.id,
                    ty: e.ty,
                    frozen: true,
                    parts: vec![e.ty.literal(if e.ty == Ty::Bool { 0 } else { 1 })],
                    kids: vec![],
                };
                out.push((e.id, lit));
                for k in e.kids.iter().filter(|k| k.ty == e.ty) {
                    // Parenthesized, so that the operand reads the same in its new place.
                    let mut k = k.clone();
                    k.parts.first_mut().unwrap().insert(0, '(');
                    k.parts.last_mut().unwrap().push(')');
                    out.push((e.id, k));
                }
            }
            for k in &e.kids {
                expr(k, out);
            }
        }
        fn node(n: &Node, out: &mut Vec<(u32, Expr)>) {
            for p in &n.line {
                if let Piece::E(e) = p {
                    expr(e, out);
                }
            }
            for c in n.body.iter().flatten() {
                node(c, out);
            }
        }
        let mut out = Vec::new();
        for n in &self.nodes {
            node(n, &mut out);
        }
        out
    }

    /// The program with expression `id` replaced by `with`.
    pub fn replace_expr(&self, id: u32, with: &Expr) -> Program {
        fn expr(e: &mut Expr, id: u32, with: &Expr) {
            if e.id == id {
                *e = with.clone();
                return;
            }
            for k in &mut e.kids {
                expr(k, id, with);
            }
        }
        fn node(n: &mut Node, id: u32, with: &Expr) {
            for p in &mut n.line {
                if let Piece::E(e) = p {
                    expr(e, id, with);
                }
            }
            for c in n.body.iter_mut().flatten() {
                node(c, id, with);
            }
        }
        let mut p = self.clone();
        for n in &mut p.nodes {
            node(n, id, with);
        }
        p
    }
}
