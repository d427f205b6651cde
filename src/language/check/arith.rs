//! Calculations the checker can see will fail: an operand that is text
//! holding no number (B139), a division by a literal zero (B140), an
//! option that is text (B143), a variable that can never get a first value
//! (B144).

use crate::base::diagnostics::{Code, Diagnostic, Findings};
use crate::language::ast::visit::{self, Site, Visitor};
use crate::language::ast::{ArithOp, Expr, Ident, Node, Value};

struct Calcs<'o, 's> {
    out: &'o mut Findings,
    /// The tree's blocks and their samples, to see what a reference holds.
    scope: &'s super::scope::Scope<'s>,
    tree: &'s crate::language::ast::Tree,
}

impl<'a> Visitor<'a> for Calcs<'_, '_> {
    fn value(&mut self, v: &'a Value, site: Site) {
        if let Value::Arith(e) = v {
            self.expr(e);
        }
        visit::walk_value(self, v, site);
    }

    /// A number helper (`{option_amount|round 2}`) is checked as a
    /// calculation's operand is, up to its first helper that makes a number.
    fn template(&mut self, t: &'a crate::language::ast::Template, site: Site) {
        use crate::language::ast::{Part, Var};
        for part in &t.parts {
            let Part::Var(Var::Helped(h)) = part else { continue };
            if !h.helpers.first().is_some_and(crate::language::helpers::Helper::takes_number) {
                continue;
            }
            match &h.base {
                Var::Named(i) => {
                    if let Some(option) = i.name.strip_prefix("option_") {
                        self.option(i, option);
                    }
                }
                Var::Ref(r) => self.sampled(r),
                _ => {}
            }
        }
        visit::walk_template(self, t, site);
    }
}

impl Calcs<'_, '_> {
    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Value(Value::Str(t)) => {
                if let Some(text) = t.as_literal() {
                    if !crate::base::values::is_json_number(text.trim()) {
                        self.out.push(
                            Diagnostic::new(
                                Code::CalcNotANumber,
                                format!("\"{}\" is not a number", crate::base::display::one_line(&text)),
                            )
                            .label(t.span, "text in a calculation")
                            .help("write the number itself, unquoted, or a variable or response path that holds one"),
                        );
                    }
                }
            }
            Expr::Value(Value::Ref(r)) => self.sampled(r),
            Expr::Var(i) => self.variable(i),
            Expr::Value(_) => {}
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
    /// A variable in a calculation: an option must be of a number type,
    /// and a custom variable must be able to have a value.
    fn variable(&mut self, i: &Ident) {
        if let Some(option) = i.name.strip_prefix("option_") {
            return self.option(i, option);
        }
        if super::declarations::shadowed(&i.name).is_some() || self.scope.first_values.has(&i.name) {
            return;
        }
        self.out.push(
            Diagnostic::new(Code::NoFirstValue, format!("`{}` can never get a first value", i.name))
                .label(i.span, "read here before anything gave it a value")
                .help(format!(
                    "declare it with a default, like `var {} = 0` at the top of the file; until then every run fails here (B323)",
                    i.name
                ))
                .note("no `var` declares it, and every `save` of it reads it first"),
        );
    }

    /// An option in a calculation: the user types text into a `string`
    /// option, which may hold no number at all.
    fn option(&mut self, i: &Ident, name: &str) {
        let declared = self.tree.body.iter().find_map(|n| match n {
            Node::Option(o) if o.name.name == name => Some(o),
            _ => None,
        });
        let Some(option) = declared else { return };
        if option.option_type() != crate::discord::options::OptionType::String {
            return;
        }
        self.out.push(
            Diagnostic::new(Code::TextOptionInCalc, format!("option `{name}` is text; a calculation needs a number"))
                .label(i.span, "used in a calculation")
                .related(option.name.span, "declared without a number type")
                .help(format!(
                    "declare it `integer` or `number` after its description, like `option {name} \"…\" integer`: the platform then lets users give only a number"
                )),
        );
    }

    /// A response reference whose block's sample holds no number there.
    fn sampled(&mut self, r: &crate::language::ast::Reference) {
        use crate::base::data::Data;
        if r.root() != Some(crate::base::path::Root::Response) {
            return;
        }
        let Some(blocks) = self.scope.blocks.get(r.block.name.trim_start_matches("api_")) else { return };
        let Some((_, block)) = blocks.iter().find(|(t, _)| std::ptr::eq(*t, self.tree)) else { return };
        let Some(sample) = super::samples::sample_of(self.scope.samples, block) else { return };
        let Ok(sample) = sample.as_ref() else { return };
        let Ok(here) = crate::base::path::walk(sample, &r.segments) else { return };
        let is = match here {
            Data::Number(_) => return,
            Data::String(s) if crate::base::values::is_json_number(s.trim()) => return,
            Data::String(s) => {
                format!("the text \"{}\"", crate::base::display::one_line(&s.chars().take(40).collect::<String>()))
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

pub fn check_tree<'s>(scope: &'s super::scope::Scope<'s>, tree: &'s crate::language::ast::Tree, out: &mut Findings) {
    visit::walk_nodes(&mut Calcs { out, scope, tree }, &tree.body);
}
