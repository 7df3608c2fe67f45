//! `--plugin-opt dump=DIR`: one file per code object, the original and its replacement side by
//! side, dis-style.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rustpython_vm::builtins::PyCode;

use crate::bytecode::dis::side_by_side;

pub struct DumpDir {
    dir: PathBuf,
    used: Mutex<HashSet<String>>,
}

impl DumpDir {
    /// Create `dir` (and its parents) if needed.
    pub fn create(dir: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(Self {
            dir: dir.to_owned(),
            used: Mutex::new(HashSet::new()),
        })
    }

    /// Write `FILE.QUALNAME.LINE.dis` (a numeric suffix keeps names unique).
    pub fn write(&self, original: &PyCode, replacement: &PyCode) -> std::io::Result<PathBuf> {
        let stem = Path::new(original.source_path().as_str())
            .file_stem()
            .map_or("code".into(), |s| s.to_string_lossy().into_owned());
        let base = sanitize(&format!(
            "{stem}.{}.{}",
            original.code.qualname.as_str(),
            original.code.first_line_number.map_or(0, |l| l.get())
        ));
        let name = {
            let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
            let mut name = format!("{base}.dis");
            let mut n = 1;
            while !used.insert(name.clone()) {
                n += 1;
                name = format!("{base}.{n}.dis");
            }
            name
        };
        let path = self.dir.join(name);
        std::fs::write(&path, side_by_side(original, replacement))?;
        Ok(path)
    }
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}
