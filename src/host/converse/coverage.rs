//! What a file's tests reached (`blkc test --coverage`): its commands,
//! handlers, events, timed events and autocompletes that no test ran, and
//! the branches of `if`s that no test took.

use crate::base::source::Span;
use crate::language::plan::{Plan, Step};

use super::Outcome;

/// What the tests reached of a bot.
#[derive(Debug, Default)]
pub struct Coverage {
    /// Each tree (its kind and name), and whether a test ran it.
    pub trees: Vec<(String, String, bool)>,
    /// Each branch of each `if`, and whether a test took it.
    pub arms: Vec<Arm>,
}

/// A branch of an `if`: the `if`'s span, its place (the conditions, then
/// the `else`, written or not), and how many it has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arm {
    pub span: Span,
    pub arm: usize,
    pub arms: usize,
    pub reached: bool,
}

impl Arm {
    /// The branch in words: `the first branch`, `the \`else\``.
    pub fn describe(&self) -> String {
        match self.arm + 1 {
            n if n == self.arms => "the `else`".to_string(),
            1 => "the `if` branch".to_string(),
            n => format!("`else if` number {}", n - 1),
        }
    }
}

impl Coverage {
    pub fn trees_reached(&self) -> usize {
        self.trees.iter().filter(|t| t.2).count()
    }

    pub fn arms_reached(&self) -> usize {
        self.arms.iter().filter(|a| a.reached).count()
    }
}

/// What `outcomes` reached of `plan`.
pub fn coverage(plan: &Plan, outcomes: &[Outcome]) -> Coverage {
    let reached =
        |kind: &str, name: &str| outcomes.iter().any(|o| o.reached.contains(&(kind.to_string(), name.to_string())));
    let taken = |start: u32, arm: usize| outcomes.iter().any(|o| o.branches.contains(&(start, arm)));
    let trees = plan
        .trees
        .iter()
        .map(|t| (t.kind.as_str().to_string(), t.name.clone(), reached(t.kind.as_str(), &t.name)))
        .collect();
    let mut arms = Vec::new();
    for tree in &plan.trees {
        each_if(&tree.steps, &mut |span, count| {
            arms.extend((0..count).map(|arm| Arm { span, arm, arms: count, reached: taken(span.start, arm) }));
        });
    }
    arms.sort_by_key(|a| (a.span.start, a.arm));
    arms.dedup_by_key(|a| (a.span.start, a.arm));
    Coverage { trees, arms }
}

/// Calls `f` with each `if` of `steps` (nested ones too) and its number
/// of branches, its `else` counted.
fn each_if(steps: &[Step], f: &mut dyn FnMut(Span, usize)) {
    for step in steps {
        if let Step::If { branches, span, .. } = step {
            f(*span, branches.len() + 1);
        }
        for nested in step.nested() {
            each_if(nested, f);
        }
    }
}
