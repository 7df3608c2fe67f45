//! The `frames` plugin: a recorder that reports every frame entry.
//!
//! Each entry is logged on the `symtrace::frames` target and, with `--plugin-opt out=PATH`,
//! written to PATH as one line `KIND<TAB>QUALNAME<TAB>FILE:LINE`, where KIND is `call` for an
//! ordinary frame and `gen` for the first run of a generator or coroutine frame (which always
//! runs as is). Tests compare this sequence with an independent oracle.

use std::fs::File;
use std::io::{LineWriter, Write};
use std::sync::{Arc, Mutex};

use rustpython::{Plugin, PluginOption, PluginOptions};
use rustpython_vm::eval_hook::{EvalFrameHook, FrameDecision, FrameEntry, FrameView};
use rustpython_vm::{PyResult, VirtualMachine};

/// The hook: records, then runs every frame as is.
pub struct FrameRecorder {
    out: Option<Mutex<LineWriter<File>>>,
}

impl FrameRecorder {
    pub fn new(out: Option<File>) -> Self {
        Self {
            out: out.map(|f| Mutex::new(LineWriter::new(f))),
        }
    }

    fn line(frame: &FrameView<'_>) -> String {
        let code = frame.code();
        let kind = match frame.entry() {
            FrameEntry::Call => "call",
            FrameEntry::GeneratorStart => "gen",
        };
        format!(
            "{kind}\t{}\t{}:{}",
            code.qualname.as_str(),
            code.source_path().as_str(),
            code.first_line_number.map_or(0, |l| l.get())
        )
    }
}

impl EvalFrameHook for FrameRecorder {
    fn on_frame(&self, frame: &FrameView<'_>, _vm: &VirtualMachine) -> PyResult<FrameDecision> {
        let line = Self::line(frame);
        log::info!(target: crate::log_targets::FRAMES, "{line}");
        if let Some(out) = &self.out {
            // A full disk must not change the program's behaviour: the record is best effort
            // and the failure is logged.
            let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
            if let Err(e) = writeln!(out, "{line}") {
                log::error!(target: crate::log_targets::FRAMES, "cannot write the frame record: {e}");
            }
        }
        Ok(FrameDecision::run_default())
    }

    fn wants_generator_events(&self) -> bool {
        true
    }
}

/// `--plugin frames`.
pub struct FramesPlugin;

impl Plugin for FramesPlugin {
    fn name(&self) -> &'static str {
        "frames"
    }
    fn summary(&self) -> &'static str {
        "record every frame entry (log target symtrace::frames)"
    }
    fn options(&self) -> &'static [PluginOption] {
        &[PluginOption {
            key: "out",
            help: "write the entered frames to this file, one a line",
        }]
    }
    fn validate(&self, options: &PluginOptions) -> Result<(), String> {
        match options.get("out") {
            Some("") => Err("option out needs a file path".to_owned()),
            _ => Ok(()),
        }
    }
    fn install(&self, vm: &VirtualMachine, options: &PluginOptions) -> PyResult<()> {
        let out = match options.get("out") {
            Some(path) => Some(File::create(path).map_err(|e| {
                vm.new_os_error(format!("frames plugin: cannot create {path}: {e}"))
            })?),
            None => None,
        };
        crate::activate(vm, Arc::new(FrameRecorder::new(out)));
        Ok(())
    }
}
