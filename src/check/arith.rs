//! Calculations the checker can see will fail: an operand that is text
//! holding no number (B139), a division by a literal zero (B140).

use crate::ast::visit::{self, Site, Visitor};
use crate::ast::{ArithOp, Expr, Value};
use crate::diagnostics::{Code, Diagnostic, Findings};

struct Calcs<'o, 's> {
    out: &'o mut Findings,
    /// The tree's blocks and their samples, to see what a reference holds.
    scope: &'s super::Scope<'s>,
    tree: &'s crate::ast::Tree,
}

impl<'a> Visitor<'a> for Calcs<'_, '_> {
    fn value(&mut self, v: &'a Value, site: Site) {
        if let Value::Arith(e) = v {
            self.expr(e);
        }
        visit::walk_value(self, v, site);
    }
}

impl Calcs<'_, '_> {
    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Value(Value::Str(t)) => {
                if let Some(text) = t.as_literal() {
                    if !crate::vocab::is_json_number(text.trim()) {
                        self.out.push(
                            Diagnostic::new(
                                Code::CalcNotANumber,
                                format!("\"{}\" is not a number", crate::display::one_line(&text)),
                            )
                            .label(t.span, "text in a calculation")
                            .help("write the number itself, unquoted, or a variable or response path that holds one"),
                        );
                    }
                }
            }
            Expr::Value(Value::Ref(r)) => self.sampled(r),
            Expr::Value(_) | Expr::Var(_) => {}
            Expr::Binary(b) => {
                if matches!(b.op, ArithOp::Div | ArithOp::Rem) && is_zero(&b.right) {
                    self.out.push(
                        Diagnostic::new(Code::CalcDivisionByZero, format!("`{}` by zero", b.op.as_str()))
                            .label(b.right.span(), "zero")
                            .related(b.op_span, "divided here")
                            .help("divide by the number meant; a divisor that comes from a value can be checked with an `if` first"),
                    );
                }
                self.expr(&b.left);
                self.expr(&b.right);
            }
            Expr::Group(inner, _) => self.expr(inner),
        }
    }
}

impl Calcs<'_, '_> {
    /// A response reference whose block's sample holds no number there.
    fn sampled(&mut self, r: &crate::ast::Reference) {
        use crate::data::Data;
        if r.root() != Some(crate::path::Root::Response) {
            return;
        }
        let Some(blocks) = self.scope.blocks.get(r.block.name.trim_start_matches("api_")) else { return };
        let Some((_, block)) = blocks.iter().find(|(t, _)| std::ptr::eq(*t, self.tree)) else { return };
        let Some(sample) = super::samples::sample_of(self.scope.samples, block) else { return };
        let Ok(sample) = sample.as_ref() else { return };
        let Ok(here) = crate::path::walk(sample, &r.segments) else { return };
        let is = match here {
            Data::Number(_) => return,
            Data::String(s) if crate::vocab::is_json_number(s.trim()) => return,
            Data::String(s) => {
                format!("the text \"{}\"", crate::display::one_line(&s.chars().take(40).collect::<String>()))
            }
            Data::Null => "null".into(),
            Data::Bool(b) => b.to_string(),
            Data::Array(_) => "an array".into(),
            Data::Object(_) => "an object".into(),
        };
        self.out.push(
            Diagnostic::new(Code::CalcNotANumber, format!("the block's sample holds {is} here, not a number"))
                .label(r.span, "used in a calculation")
                .help("read a field that holds a number, or record a fresh sample if the API changed (`blkc test --save`)")
                .note(format!("checked against the sample `{}`", block.sample().map_or("", |s| s.value.as_str()))),
        );
    }
}

/// A literal zero, in any spelling (`0`, `0.0`, `-0e3`, `(0)`).
fn is_zero(e: &Expr) -> bool {
    match e {
        Expr::Value(Value::Number(n, _)) => {
            let mantissa = n.split(['e', 'E']).next().unwrap_or_default();
            mantissa.bytes().all(|b| matches!(b, b'0' | b'.' | b'-'))
        }
        Expr::Group(inner, _) => is_zero(inner),
        _ => false,
    }
}

pub fn check_tree<'s>(scope: &'s super::Scope<'s>, tree: &'s crate::ast::Tree, out: &mut Findings) {
    visit::walk_nodes(&mut Calcs { out, scope, tree }, &tree.body);
}
