//! What a run reads of the world besides its inputs: the time now and a
//! source of random draws. A run from a shell fixes either (`blkc run
//! --now`, `--seed`) so that it can be run again the same; a served run
//! reads the clock and draws from a generator the system seeds.

use rand::{RngCore, SeedableRng as _};
use rand_chacha::ChaCha8Rng;
use time::OffsetDateTime;

/// The time now and random draws, as a run sees them.
pub trait World {
    /// The generator every draw of the run comes from.
    fn rng(&mut self) -> &mut dyn RngCore;
    /// The time now (to the second).
    fn now(&self) -> OffsetDateTime;
}

/// The world of one run: the clock (or a fixed time), and a generator made
/// when the run first draws (from its seed, or from the system).
#[derive(Debug, Clone, Default)]
pub struct Real {
    seed: Option<u64>,
    now: Option<OffsetDateTime>,
    rng: Option<ChaCha8Rng>,
}

impl Real {
    /// A run's world: `seed` fixes its draws, `now` its time.
    pub fn new(seed: Option<u64>, now: Option<OffsetDateTime>) -> Real {
        Real { seed, now, rng: None }
    }
}

impl World for Real {
    fn rng(&mut self) -> &mut dyn RngCore {
        let seed = self.seed;
        self.rng.get_or_insert_with(|| match seed {
            Some(seed) => ChaCha8Rng::seed_from_u64(seed),
            None => ChaCha8Rng::from_os_rng(),
        })
    }

    fn now(&self) -> OffsetDateTime {
        let now = self.now.unwrap_or_else(OffsetDateTime::now_utc);
        // To the second: what a time is written with.
        now.replace_nanosecond(0).unwrap_or(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng as _;

    #[test]
    fn a_seed_fixes_the_draws_and_no_seed_varies_them() {
        let draws = |world: &mut Real| (0..20).map(|_| world.rng().random_range(1..=6)).collect::<Vec<u32>>();
        let (a, b) = (draws(&mut Real::new(Some(7), None)), draws(&mut Real::new(Some(7), None)));
        assert_eq!(a, b);
        assert_ne!(a, draws(&mut Real::new(Some(8), None)));
        // ChaCha8's stream is fixed across versions: a seed's draws stay.
        assert_eq!(a[..5], [1, 1, 2, 2, 2], "{a:?}");
        assert_ne!(draws(&mut Real::new(None, None)), draws(&mut Real::new(None, None)));
        let at = OffsetDateTime::from_unix_timestamp_nanos(1_767_323_045_678_999_000).unwrap();
        assert_eq!(Real::new(None, Some(at)).now().unix_timestamp_nanos(), 1_767_323_045_000_000_000);
    }
}
