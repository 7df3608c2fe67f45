//! symtrace fork: new file, the plugin registry of --plugin
//! Plugins selected on the command line: `--plugin NAME [--plugin-opt KEY=VALUE]...`.
//!
//! A binary registers the plugins it links in a [`PluginRegistry`] and hands it to
//! [`crate::run_with_plugins`]. The chosen plugin is checked before the interpreter starts
//! (unknown name, malformed or unknown option: a message and exit status 2) and installed once
//! the interpreter is up (after `import site`), before the program runs.

use rustpython_vm::{PyResult, VirtualMachine};

/// One option a plugin accepts.
#[derive(Clone, Copy, Debug)]
pub struct PluginOption {
    pub key: &'static str,
    pub help: &'static str,
}

/// The `--plugin-opt` values given for a plugin, in command-line order.
#[derive(Clone, Debug, Default)]
pub struct PluginOptions {
    pairs: Vec<(String, String)>,
}

impl PluginOptions {
    /// Parse `KEY=VALUE` strings; the error names the malformed one.
    pub fn parse<S: AsRef<str>>(raw: &[S]) -> Result<Self, String> {
        let mut pairs = Vec::with_capacity(raw.len());
        for item in raw {
            let item = item.as_ref();
            match item.split_once('=') {
                Some((key, value)) if !key.trim().is_empty() => {
                    pairs.push((key.trim().to_owned(), value.to_owned()))
                }
                _ => return Err(format!("--plugin-opt takes KEY=VALUE, got {item:?}")),
            }
        }
        Ok(Self { pairs })
    }

    /// The last value given for `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// `key` as a flag: `1`, `true`, `yes`, `on` (or `0`, `false`, `no`, `off`).
    pub fn flag(&self, key: &str) -> Result<Option<bool>, String> {
        self.get(key)
            .map(|v| match v.to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => Ok(true),
                "0" | "false" | "no" | "off" => Ok(false),
                other => Err(format!("option {key} takes 0 or 1, got {other:?}")),
            })
            .transpose()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

/// A plugin that the `rustpython` binary can install with `--plugin NAME`.
pub trait Plugin: Send + Sync {
    /// The name given to `--plugin`.
    fn name(&self) -> &'static str;
    /// One line for the list of available plugins.
    fn summary(&self) -> &'static str;
    /// The keys `--plugin-opt` accepts; any other key is refused before the interpreter starts.
    fn options(&self) -> &'static [PluginOption] {
        &[]
    }
    /// Check option values before the interpreter starts.
    fn validate(&self, _options: &PluginOptions) -> Result<(), String> {
        Ok(())
    }
    /// Install the plugin: called once, on the main thread, after `import site` and before the
    /// program runs.
    fn install(&self, vm: &VirtualMachine, options: &PluginOptions) -> PyResult<()>;
}

/// The plugins a binary offers.
#[derive(Default)]
pub struct PluginRegistry {
    plugins: Vec<Box<dyn Plugin>>,
}

impl PluginRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with(mut self, plugin: impl Plugin + 'static) -> Self {
        self.register(plugin);
        self
    }

    /// Register a plugin; a later one with the same name replaces the earlier.
    pub fn register(&mut self, plugin: impl Plugin + 'static) {
        self.plugins.retain(|p| p.name() != plugin.name());
        self.plugins.push(Box::new(plugin));
    }

    pub fn find(&self, name: &str) -> Option<&dyn Plugin> {
        self.plugins.iter().find(|p| p.name() == name).map(|p| &**p)
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.plugins.iter().map(|p| p.name()).collect()
    }

    /// The list printed for `--plugin` with an unknown name.
    pub fn describe(&self) -> String {
        if self.plugins.is_empty() {
            return "no plugins are available in this build".to_owned();
        }
        let mut out = String::from("available plugins:\n");
        for p in &self.plugins {
            out.push_str(&format!("  {:<12} {}\n", p.name(), p.summary()));
            for opt in p.options() {
                out.push_str(&format!("      --plugin-opt {}=...  {}\n", opt.key, opt.help));
            }
        }
        out
    }

    /// Resolve a command-line request: the plugin and its checked options.
    pub fn resolve(
        &self,
        request: &PluginRequest,
    ) -> Result<(&dyn Plugin, PluginOptions), String> {
        let name = request.name.as_deref().ok_or_else(|| {
            format!("--plugin-opt needs --plugin NAME; {}", self.describe().trim_end())
        })?;
        let plugin = self.find(name).ok_or_else(|| {
            format!("unknown plugin {name:?}; {}", self.describe().trim_end())
        })?;
        let options = PluginOptions::parse(&request.options)?;
        for (key, _) in options.iter() {
            if !plugin.options().iter().any(|o| o.key == key) {
                let known: Vec<_> = plugin.options().iter().map(|o| o.key).collect();
                return Err(format!(
                    "plugin {:?} has no option {:?}; its options: {}",
                    plugin.name(),
                    key,
                    if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                ));
            }
        }
        plugin.validate(&options).map_err(|e| format!("plugin {:?}: {e}", plugin.name()))?;
        Ok((plugin, options))
    }
}

/// What the command line asked for: `--plugin NAME` and its raw `--plugin-opt` strings.
#[derive(Clone, Debug, Default)]
pub struct PluginRequest {
    /// `None` when only `--plugin-opt` was given, which is an error.
    pub name: Option<String>,
    pub options: Vec<String>,
}
