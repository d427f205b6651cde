//! Before the first request: every secret and the bot token a tree may
//! send has a value long enough to be kept out of output, and the redactor
//! that keeps them out.

use super::failure;
use super::inputs::{Inputs, Outcome};
use super::redact::{Redactor, MIN_SECRET_LEN};
use crate::base::source::Span;
use crate::language::plan::{self, Seg, Step, Template};

/// Builds the redactor of the secrets `steps` use, and the bot token.
pub fn redactor(inputs: &Inputs, steps: &[Step]) -> Redactor {
    let mut r = Redactor::default();
    let mut used = Vec::new();
    plan::each_template(steps, &mut |t| {
        for seg in &t.parts {
            if let Seg::Secret { name } = seg {
                used.push(name.clone());
            }
        }
    });
    for (name, value) in &inputs.secrets {
        if used.contains(name) {
            r.add(value, &format!("<{name}>"));
        }
    }
    if let Some(token) = &inputs.bot_token {
        r.add(token, "{bot_token}");
    }
    r
}

/// Where the first action of `steps` is, in any branch.
fn first_action(steps: &[Step]) -> Option<Span> {
    steps.iter().find_map(|s| match s {
        Step::Action(a) => Some(a.span),
        _ => s.nested().into_iter().find_map(first_action),
    })
}

/// Every secret slot and the bot token that the tree may send must have a
/// value before the first request goes out.
pub fn preflight(steps: &[Step], inputs: &Inputs) -> Outcome {
    preflight_all(&[steps], &[], inputs)
}

/// [`preflight`] over several trees at once, and `more` templates besides
/// (the ids of `require` lines): every secret any of them lacks is named in
/// one diagnostic.
pub fn preflight_all(trees: &[&[Step]], more: &[&Template], inputs: &Inputs) -> Outcome {
    let mut missing: Vec<(String, Span)> = Vec::new();
    let mut short: Option<(String, Span)> = None;
    let mut token_needed: Option<Span> = None;
    let mut visit = |t: &Template| {
        for seg in &t.parts {
            match seg {
                Seg::Secret { name }
                    if inputs.secrets.get(name).is_some_and(|v| v.chars().count() < MIN_SECRET_LEN) =>
                {
                    short.get_or_insert((name.clone(), t.span));
                }
                Seg::Secret { name }
                    if !inputs.secrets.contains_key(name) && !missing.iter().any(|(n, _)| n == name) =>
                {
                    missing.push((name.clone(), t.span));
                }
                Seg::BotToken if inputs.bot_token.is_none() => {
                    token_needed.get_or_insert(t.span);
                }
                _ => {}
            }
        }
    };
    for steps in trees {
        plan::each_template(steps, &mut visit);
    }
    more.iter().for_each(|t| visit(t));
    if let Some((name, span)) = short {
        return Err(Box::new(failure::secret_too_short(&name, span)));
    }
    if let Some((name, span)) = missing.first() {
        let others: Vec<&str> = missing.iter().skip(1).map(|(n, _)| n.as_ref()).collect();
        return Err(Box::new(failure::missing_secret(name, *span, &others)));
    }
    // An action sends the bot token, though no template of it says so.
    let action = || trees.iter().find_map(|steps| first_action(steps)).filter(|_| inputs.bot_token.is_none());
    if let Some(span) = token_needed.or_else(action) {
        return Err(Box::new(failure::missing_token(span)));
    }
    Ok(())
}
