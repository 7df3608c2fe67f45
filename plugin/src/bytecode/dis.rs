//! dis-style listings of code objects, and the side-by-side view of an original and its
//! replacement that `RUST_LOG=symtrace::bytecode=debug` and `--plugin-opt dump=DIR` show.

use rustpython_vm::PyObject;
use rustpython_vm::builtins::{PyCode, PyInt, PyStr};

use super::decode::{DecodeError, Instr, decode};
use super::opcodes::{local_slots, name_index, opcode_name, uses_cell_slot};

/// One line per instruction (`line  offset  OPNAME  arg  (meaning)`), then the exception
/// table, as `dis.dis` prints them.
pub fn listing(code: &PyCode) -> Result<Vec<String>, DecodeError> {
    let decoded = decode(code)?;
    let all: Vec<&Instr> = decoded.prologue.iter().chain(&decoded.instrs).collect();
    let skip = decoded.prologue.len();
    let slots = slot_names(code);
    let mut lines = Vec::with_capacity(all.len() + 4);
    let mut last_line = None;
    for (i, x) in all.iter().enumerate() {
        let line = x.position.line;
        let line_col = if line != last_line || i == 0 {
            last_line = line;
            line.map_or("--".to_owned(), |l| l.to_string())
        } else {
            String::new()
        };
        // Targets index the body, which follows the prologue.
        let meaning = meaning(code, &slots, x, x.target.map(|t| all[t + skip].offset));
        lines.push(
            format!(
                "{line_col:>5} {:>6}  {:<28} {:>5}  {meaning}",
                x.offset * 2,
                opcode_name(x.op),
                x.arg
            )
            .trim_end()
            .to_owned(),
        );
    }
    let mut handlers: Vec<(usize, usize, usize, u32, bool)> = Vec::new();
    for (i, x) in decoded.instrs.iter().enumerate() {
        let Some(h) = x.handler else { continue };
        let target = decoded.instrs[h.target].offset;
        let end = decoded.instrs.get(i + 1).map_or(x.offset + 1, |n| n.offset);
        match handlers.last_mut() {
            Some(last)
                if last.1 == x.offset
                    && (last.2, last.3, last.4) == (target, h.depth, h.push_lasti) =>
            {
                last.1 = end
            }
            _ => handlers.push((x.offset, end, target, h.depth, h.push_lasti)),
        }
    }
    if !handlers.is_empty() {
        lines.push("ExceptionTable:".to_owned());
        for (start, end, target, depth, lasti) in handlers {
            lines.push(format!(
                "  {} to {} -> {} [{depth}]{}",
                start * 2,
                end * 2,
                target * 2,
                if lasti { " lasti" } else { "" }
            ));
        }
    }
    Ok(lines)
}

/// The original's listing and the replacement's, in two columns under a header naming the
/// code object.
pub fn side_by_side(original: &PyCode, replacement: &PyCode) -> String {
    let render =
        |code: &PyCode| listing(code).unwrap_or_else(|e| vec![format!("<cannot decode: {e}>")]);
    let (left, right) = (render(original), render(replacement));
    let width = left
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(40);
    let mut out = format!(
        "{} ({}:{})\n{:<width$} | replacement\n",
        original.code.qualname.as_str(),
        original.source_path().as_str(),
        original.code.first_line_number.map_or(0, |l| l.get()),
        "original",
    );
    for i in 0..left.len().max(right.len()) {
        let l = left.get(i).map_or("", String::as_str);
        let r = right.get(i).map_or("", String::as_str);
        out.push_str(format!("{l:<width$} | {r}").trim_end());
        out.push('\n');
    }
    out
}

fn slot_names(code: &PyCode) -> Vec<String> {
    let c = &code.code;
    let mut names: Vec<String> = c.varnames.iter().map(|n| n.as_str().to_owned()).collect();
    for cell in c.cellvars.iter() {
        if !c.varnames.iter().any(|v| v.as_str() == cell.as_str()) {
            names.push(cell.as_str().to_owned());
        }
    }
    names.extend(c.freevars.iter().map(|n| n.as_str().to_owned()));
    names
}

fn meaning(code: &PyCode, slots: &[String], x: &Instr, target_offset: Option<usize>) -> String {
    let c = &code.code;
    if let Some(t) = target_offset {
        return format!("(to {})", t * 2);
    }
    if x.op == rustpython_vm::bytecode::Opcode::LoadConst {
        return c.constants.get(x.arg as usize).map_or("(?)".into(), |k| {
            let obj: &PyObject = std::borrow::Borrow::borrow(k);
            format!("({})", short_repr(obj))
        });
    }
    if let Some(i) = name_index(x.op, x.arg) {
        return format!("({})", c.names.get(i as usize).map_or("?", |n| n.as_str()));
    }
    let slot = |s: u32| slots.get(s as usize).map_or("?", String::as_str);
    if uses_cell_slot(x.op) {
        return format!("({})", slot(x.arg));
    }
    match local_slots(x.op, x.arg) {
        Some([Some(a), Some(b)]) => format!("({}, {})", slot(a), slot(b)),
        Some([Some(a), None]) => format!("({})", slot(a)),
        _ => String::new(),
    }
}

/// A constant as dis shows it, without calling into Python (the hook may not run Python).
fn short_repr(obj: &PyObject) -> String {
    if let Some(s) = obj.downcast_ref::<PyStr>() {
        let text = s.to_string_lossy();
        let clipped: String = text.chars().take(40).collect();
        return format!(
            "{:?}{}",
            clipped,
            if text.chars().count() > 40 { "..." } else { "" }
        );
    }
    if let Some(i) = obj.downcast_ref::<PyInt>() {
        return i.as_bigint().to_string();
    }
    if let Some(code) = obj.downcast_ref::<PyCode>() {
        return format!("<code object {}>", code.code.obj_name.as_str());
    }
    match &*obj.class().name() {
        "NoneType" => "None".into(),
        name => format!("<{name}>"),
    }
}
