//! `--plugin symtrace`: its options, checked before the interpreter starts, and the hook it
//! installs (the translator, or a code-rewriting backend).

use std::path::Path;
use std::sync::Arc;

use rustpython::{Plugin, PluginOption, PluginOptions};
use rustpython_vm::{PyResult, VirtualMachine};

use super::SymtraceHook;
use super::backend::{BACKEND_NAMES, backend_named};
use super::dump::DumpDir;
use crate::translate::Options;

/// `--plugin symtrace`.
pub struct SymtracePlugin;

const OPTIONS: &[PluginOption] = &[
    PluginOption {
        key: "backend",
        help: "what replaces each frame's code: translate (default: the symbolic translator), none (run as written) or roundtrip (decode, re-assemble, verify)",
    },
    PluginOption {
        key: "dump",
        help: "with backend=none|roundtrip: write each code object and its replacement, side by side, into this directory",
    },
    PluginOption {
        key: "strict",
        help: "1: every fallback raises RuntimeError (with the reason and the user's file:line)",
    },
    PluginOption {
        key: "trace_all",
        help: "1: translate every user frame, even when its graph is empty",
    },
    PluginOption {
        key: "recompile_limit",
        help: "translations per code object before it runs as written on a guard miss (default 8)",
    },
    PluginOption {
        key: "skip_after",
        help: "calls without a graph after which a code object is skipped for good (default 2; a call that met no tensor at all skips it at once)",
    },
    PluginOption {
        key: "dynamic",
        help: "which tensor sizes are dynamic: auto (default: a size whose change made a frame translate again), true (all, from the first translation), false (none)",
    },
    PluginOption {
        key: "min_graph_size",
        help: "ops a loop's body must capture before a graph break for the loop to be split and its body translated per iteration (default 3)",
    },
];

fn flag(options: &PluginOptions, key: &str) -> Result<bool, String> {
    match options.get(key) {
        None | Some("0") => Ok(false),
        Some("1") => Ok(true),
        Some(v) => Err(format!("option {key} takes 0 or 1, not {v:?}")),
    }
}

fn count(options: &PluginOptions, key: &str, default: usize) -> Result<usize, String> {
    match options.get(key) {
        None => Ok(default),
        Some(v) => v
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("option {key} takes a positive number, not {v:?}")),
    }
}

fn translator_options(options: &PluginOptions) -> Result<Options, String> {
    let d = Options::default();
    Ok(Options {
        strict: flag(options, "strict")?,
        trace_all: flag(options, "trace_all")?,
        recompile_limit: count(options, "recompile_limit", d.recompile_limit)?,
        skip_after: count(options, "skip_after", d.skip_after)?,
        min_graph_size: count(options, "min_graph_size", d.min_graph_size)?,
        dynamic: match options.get("dynamic") {
            None => d.dynamic,
            Some(v) => crate::translate::Dynamic::named(v)
                .ok_or_else(|| format!("option dynamic takes auto, true or false, not {v:?}"))?,
        },
    })
}

impl Plugin for SymtracePlugin {
    fn name(&self) -> &'static str {
        "symtrace"
    }
    fn summary(&self) -> &'static str {
        "the symbolic opcode translator: tensor work captured into graphs, guarded, cached"
    }
    fn options(&self) -> &'static [PluginOption] {
        OPTIONS
    }
    fn validate(&self, options: &PluginOptions) -> Result<(), String> {
        if let Some(name) = options.get("backend")
            && name != "translate"
            && backend_named(name).is_none()
        {
            return Err(format!(
                "unknown backend {name:?} (known: translate, {BACKEND_NAMES})"
            ));
        }
        if options.get("dump") == Some("") {
            return Err("option dump needs a directory".to_owned());
        }
        translator_options(options).map(|_| ())
    }
    fn install(&self, vm: &VirtualMachine, options: &PluginOptions) -> PyResult<()> {
        let name = options.get("backend").unwrap_or("translate");
        if name == "translate" {
            let opts = translator_options(options).map_err(|e| vm.new_value_error(e))?;
            crate::activate(vm, SymtraceHook::translating(opts, vm));
            return Ok(());
        }
        let backend = backend_named(name).expect("validated");
        let dump = match options.get("dump") {
            Some(dir) => Some(DumpDir::create(Path::new(dir)).map_err(|e| {
                vm.new_os_error(format!(
                    "symtrace plugin: cannot create the dump directory {dir}: {e}"
                ))
            })?),
            None => None,
        };
        crate::activate(vm, Arc::new(SymtraceHook::new(backend, dump)));
        Ok(())
    }
}
