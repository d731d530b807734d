//! A k6 script as dbload reads it: the file (or stdin), the modules it may
//! import, and its errors placed at `file:line:col`. k6's own modules
//! (`k6`, `k6/http`, `k6/metrics`, `k6/data`) are small ES modules here
//! over functions the VU installs in Rust (`k6::vu`), and so is jslib's
//! k6-summary, by its URL (there is no network at run time); a script's
//! relative imports are read beside it. Anything else (another `k6/...`
//! module, another remote URL) is refused before the run, where the import
//! is written.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use anyhow::Result;
use rquickjs::loader::{ImportAttributes, Loader, Resolver};
use rquickjs::module::Declared;
use rquickjs::{CaughtError, Ctx, Module};

use crate::error::usage;
use crate::file_cap::{self, Cap};

/// A script is configuration: read whole, under the configuration cap.
const SCRIPT: Cap = Cap::config("the k6 script");

/// The script's text and where it came from.
#[derive(Debug, Clone)]
pub struct Script {
    /// As messages name it: the path given, or `stdin`.
    pub name: String,
    pub source: String,
    /// Where `open()` and relative imports are read from.
    pub dir: PathBuf,
}

impl Script {
    /// The script at `arg`; `-`: read from `stdin`.
    pub fn read(arg: &Path, stdin: &mut dyn std::io::Read) -> Result<Script> {
        if arg == Path::new("-") {
            let source = file_cap::read_text_from(stdin, "the k6 script on stdin", SCRIPT)?;
            let dir = std::env::current_dir().unwrap_or_default();
            return Ok(Script { name: "stdin".into(), source, dir });
        }
        let name = arg.display().to_string();
        let source = file_cap::read_text(arg, &format!("the k6 script {name}"), SCRIPT)?;
        let dir = arg.parent().filter(|p| !p.as_os_str().is_empty()).map_or_else(|| PathBuf::from("."), Path::to_owned);
        Ok(Script { name, source, dir })
    }
}

/// k6's modules that dbload has, as ES modules over the VU's native
/// functions (`globalThis.__k6*`, installed by `k6::vu`), and the jslib
/// modules it builds in (k6-summary's `textSummary`), by their URLs.
fn builtin(name: &str) -> Option<&'static str> {
    Some(match name {
        "k6" => include_str!("js/k6.js"),
        "k6/http" => include_str!("js/http.js"),
        "k6/metrics" => include_str!("js/metrics.js"),
        "k6/data" => include_str!("js/data.js"),
        "https://jslib.k6.io/k6-summary/0.0.2/index.js" | "https://jslib.k6.io/k6-summary/0.1.0/index.js" => {
            include_str!("js/summary.js")
        }
        _ => return None,
    })
}

/// An import that the loader refused, kept to be placed in the importer's
/// source once the module's compilation has failed on it.
#[derive(Debug, Clone)]
struct Refused {
    importer: String,
    name: String,
    why: String,
}

/// Resolves and loads the script's imports; a refusal it made is kept
/// for [`Imports::error`], which places it in the importer's source.
#[derive(Clone)]
pub struct Imports {
    root: Script,
    refused: Rc<RefCell<Option<Refused>>>,
}

impl Imports {
    pub fn new(root: Script) -> Imports {
        Imports { root, refused: Rc::default() }
    }

    fn refuse(&self, importer: &str, name: &str, why: String) -> rquickjs::Error {
        *self.refused.borrow_mut() = Some(Refused { importer: importer.into(), name: name.into(), why: why.clone() });
        rquickjs::Error::new_resolving_message(importer, name, why)
    }

    /// The source of a module by its resolved name: the script itself or a
    /// file it imports.
    fn source_of(&self, name: &str) -> Option<String> {
        if name == self.root.name {
            return Some(self.root.source.clone());
        }
        std::fs::read_to_string(name).ok()
    }

    /// Compiles the script as a module; its errors at `file:line:col`,
    /// exit 2.
    pub fn declare<'js>(&self, ctx: &Ctx<'js>) -> Result<Module<'js, Declared>> {
        let declared = Module::declare(ctx.clone(), self.root.name.as_str(), self.root.source.as_str());
        declared.map_err(|e| self.error(ctx, e, "loading the script"))
    }

    /// A JavaScript error as the user reads it: where (`file:line:col`,
    /// an import refused placed where it is written), what, and for a
    /// refused import what to do. `when` says what the script was doing.
    pub fn error(&self, ctx: &Ctx<'_>, e: rquickjs::Error, when: &str) -> anyhow::Error {
        if let Some(r) = self.refused.borrow_mut().take() {
            let at = self.source_of(&r.importer).and_then(|s| position_of_import(&s, &r.name));
            let (line, col) = at.unwrap_or((1, 1));
            return usage(format!("{}:{line}:{col}: import {:?}: {}", r.importer, r.name, r.why));
        }
        usage(format!("{when}: {}", describe(ctx, e)))
    }
}

/// `file:line:col: message` of a caught JavaScript error, with its stack
/// below when it has more than one frame.
pub fn describe(ctx: &Ctx<'_>, e: rquickjs::Error) -> String {
    let caught = CaughtError::from_error(ctx, e);
    match caught {
        CaughtError::Exception(ex) => {
            let message = ex.message().unwrap_or_default();
            let stack = ex.stack().unwrap_or_default();
            let name: String = ex.get("name").unwrap_or_else(|_| "Error".into());
            match first_location(&stack) {
                Some(at) => {
                    let frames = stack.lines().filter(|l| !l.trim().is_empty()).count();
                    let more = if frames > 1 { format!("\n{}", stack.trim_end()) } else { String::new() };
                    format!("{at}: {name}: {message}{more}")
                }
                None => format!("{name}: {message}"),
            }
        }
        CaughtError::Value(v) => {
            let shown = ctx.json_stringify(v).ok().flatten().and_then(|s| s.to_string().ok());
            format!("the script threw {}", shown.unwrap_or_else(|| "a value".into()))
        }
        CaughtError::Error(e) => e.to_string(),
    }
}

/// The first `file:line:col` of a QuickJS stack (`    at f (s.js:3:9)` or
/// `    at s.js:3:9`).
fn first_location(stack: &str) -> Option<&str> {
    stack.lines().find_map(|l| {
        let at = l.trim().strip_prefix("at ")?;
        let at = match at.rfind('(') {
            Some(open) => at[open + 1..].strip_suffix(')')?,
            None => at,
        };
        let mut parts = at.rsplitn(3, ':');
        let (col, line) = (parts.next()?, parts.next()?);
        (col.bytes().all(|b| b.is_ascii_digit()) && line.bytes().all(|b| b.is_ascii_digit())).then_some(at)
    })
}

/// Line and column (1-based) of the quoted specifier `name` in an import
/// of `source`.
fn position_of_import(source: &str, name: &str) -> Option<(usize, usize)> {
    let at = [format!("'{name}'"), format!("\"{name}\"")].iter().filter_map(|q| source.find(q.as_str())).min()?;
    let before = &source[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    Some((line, col))
}

impl Resolver for Imports {
    fn resolve<'js>(
        &mut self,
        _: &Ctx<'js>,
        base: &str,
        name: &str,
        _: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<String> {
        if builtin(name).is_some() {
            return Ok(name.into());
        }
        if name.starts_with("k6/") || name == "k6" {
            return Err(self.refuse(
                base,
                name,
                "dbload does not have this k6 module yet (it has k6, k6/http, k6/metrics, k6/data): remove the \
                 import, or run this script with k6 itself"
                    .into(),
            ));
        }
        if name.contains("://") {
            return Err(self.refuse(
                base,
                name,
                "remote modules are not fetched: download the module next to the script and import it by a \
                 relative path (./module.js)"
                    .into(),
            ));
        }
        if !(name.starts_with("./") || name.starts_with("../") || name.starts_with('/')) {
            return Err(self.refuse(
                base,
                name,
                "a bare module name: import a file by its path (./module.js), or one of k6's modules".into(),
            ));
        }
        let dir = if base == self.root.name {
            self.root.dir.clone()
        } else {
            Path::new(base).parent().map_or_else(|| self.root.dir.clone(), Path::to_owned)
        };
        let path = dir.join(name);
        if !path.is_file() {
            return Err(self.refuse(base, name, format!("{} is not a file", path.display())));
        }
        Ok(path.display().to_string())
    }
}

impl Loader for Imports {
    fn load<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        _: Option<ImportAttributes<'js>>,
    ) -> rquickjs::Result<Module<'js, Declared>> {
        if let Some(source) = builtin(name) {
            return Module::declare(ctx.clone(), name, source);
        }
        let source = file_cap::read_text(Path::new(name), &format!("the module {name}"), SCRIPT)
            .map_err(|e| rquickjs::Error::new_loading_message(name, format!("{e:#}")))?;
        Module::declare(ctx.clone(), name, source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_read_from_quickjs_stacks() {
        assert_eq!(first_location("    at /tmp/s.js:3:11\n"), Some("/tmp/s.js:3:11"));
        assert_eq!(first_location("    at default (s.js:3:38)\n    at x (s.js:9:1)\n"), Some("s.js:3:38"));
        assert_eq!(first_location("    at <anonymous>\n"), None);
    }

    #[test]
    fn an_import_is_found_where_it_is_written() {
        let src = "import http from 'k6/http';\n  import ws from \"k6/ws\";\n";
        assert_eq!(position_of_import(src, "k6/ws"), Some((2, 18)));
        assert_eq!(position_of_import(src, "k6/http"), Some((1, 18)));
    }
}
