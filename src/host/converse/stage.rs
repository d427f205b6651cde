//! Where conversation tests run: `blkc serve` in this process, as `blkc
//! play` runs it, pointed at play's stand-in of the platform (its API and
//! its Gateway), offline, with a store of each test's own, a clock a test
//! moves, and the answers a test gives its request blocks. A test's
//! interactions are signed and posted to serve's front door, so they take
//! the one pipeline chat users' do.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::host::play::Play;
use crate::host::serve::{self, Config, Loaded, LogFormat, Shards};
use crate::run::eval::{Answers, Inputs, Options};
use crate::run::store::later::Later;
use crate::run::store::{Host, LazyStore, ServingClaim, SqliteHost, StoreError, VarStore};

/// The seed of a test's random draws (`{random 1 6}`, `|pick`): its nth
/// run draws from `SEED + n`, so a test draws the same every time.
const SEED: u64 = 53;

/// A bot served for tests, and what the tests change between their steps.
pub struct Stage {
    pub play: Arc<Play>,
    store: Arc<Fresh>,
    /// How far the bot's clock has been moved forward.
    pub moved: Arc<AtomicI64>,
    pub answers: Arc<Answers>,
    /// The runs of the test so far: each draws from its own seed, the same
    /// every time the test runs.
    draws: Arc<std::sync::atomic::AtomicU64>,
    /// Tests are numbered for their stores.
    tests: usize,
    /// Whether the bot hears events (its servers are greeted anew for
    /// each test).
    events: bool,
    /// The kinds of the file's event trees.
    kinds: std::collections::HashSet<String>,
    /// Whether the file waits for members' messages (`await`).
    pub awaits: bool,
    /// Each command's options and their types, as the platform numbers them.
    options: std::collections::HashMap<String, Vec<(String, u8)>>,
    /// Tells serve to stop, and its thread, which returns once it has.
    stop: Arc<tokio::sync::Notify>,
    serving: Option<std::thread::JoinHandle<()>>,
    _scratch: tempfile::TempDir,
    _runtime: tokio::runtime::Runtime,
}

impl Drop for Stage {
    /// Stops serve (it drains and returns), then the stand-in.
    fn drop(&mut self) {
        self.stop.notify_one();
        if let Some(serving) = self.serving.take() {
            let _ = serving.join();
        }
        self.play.close();
    }
}

/// Why a stage did not start.
#[derive(Debug)]
pub struct NoStage(pub String);

impl std::fmt::Display for NoStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Stage {
    /// Serves `loaded` (the bot's file, at `path`) on loopback for tests,
    /// with `secrets`, once it answers.
    pub fn start(path: &Path, loaded: Loaded, secrets: Inputs) -> Result<Stage, NoStage> {
        let fail = |what: &str, e: &dyn std::fmt::Display| NoStage(format!("{what}: {e}"));
        let scratch = scratch().map_err(|e| fail("cannot make a folder for the tests' stores", &e))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| fail("cannot start", &e))?;
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(("127.0.0.1", 0)))
            .map_err(|e| fail("cannot listen on loopback", &e))?;
        let address = listener.local_addr().map_err(|e| fail("cannot listen on loopback", &e))?;
        let play = Arc::new(Play::new(address, path.to_path_buf()).map_err(|e| fail("cannot start", &e))?);
        runtime.spawn(crate::host::play::run(play.clone(), listener));
        let gateway = crate::host::play::gateway::start(play.clone()).map_err(|e| fail("cannot start", &e))?;
        *play.gateway.lock().unwrap_or_else(|e| e.into_inner()) = Some(gateway);
        play.tell(&loaded.checked);
        let events = loaded.plan.trees.iter().any(|t| t.kind == crate::language::plan::TreeKind::Event);
        let (awaits, (kinds, options)) = (loaded.plan.awaits, heard(&loaded.plan));
        let store = Arc::new(Fresh::new(scratch.path()));
        // Its waiting work is listed, as play's page lists it.
        let _ = play.store.set(crate::run::store::Backend::from_arc(store.clone()));
        let moved = Arc::new(AtomicI64::new(0));
        let answers = Arc::new(Answers::default());
        let mut config = config(&play, secrets, store.clone(), answers.clone())?;
        let draws = Arc::new(std::sync::atomic::AtomicU64::new(0));
        config.options.seed = Some(SEED);
        config.options.draws = Some(draws.clone());
        play.webhook_secrets(&loaded.plan, &mut config.inputs);
        config.clock = serve::clock::Clock::movable(moved.clone());
        config.loaded = Some(loaded);
        let stop = Arc::new(tokio::sync::Notify::new());
        config.hooks = Some(crate::host::serve::Hooks { stop: Some(stop.clone()), ..play.hooks() });
        let (ready, started) = std::sync::mpsc::channel::<Result<String, String>>();
        let told = ready.clone();
        config.on_ready = Some(Box::new(move |at| {
            let _ = told.send(Ok(format!("http://{at}/interactions")));
        }));
        // The tests say what the bot did; serve's own log is not theirs.
        let _ = tracing::subscriber::set_global_default(tracing::subscriber::NoSubscriber::default());
        let serving = std::thread::Builder::new()
            .name("blkc-test-serve".into())
            .spawn(move || {
                let why = serve::serve(config).err().map_or("the bot stopped".to_string(), |e| e.to_string());
                let _ = ready.send(Err(why));
            })
            .map_err(|e| fail("cannot start", &e))?;
        match started.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(url)) => *play.serve.lock().unwrap_or_else(|e| e.into_inner()) = Some(url),
            Ok(Err(why)) => return Err(NoStage(format!("the bot did not start: {why}"))),
            Err(_) => return Err(NoStage("the bot did not start within 60 seconds".to_string())),
        }
        Ok(Stage {
            play,
            store,
            moved,
            answers,
            draws,
            tests: 0,
            events,
            kinds,
            awaits,
            options,
            stop,
            serving: Some(serving),
            _scratch: scratch,
            _runtime: runtime,
        })
    }

    /// Makes the stage new for a test: an empty store, the clock where it
    /// was, every block answered from its sample.
    /// Whether an event tree of the file runs on events of `kind`.
    pub fn hears(&self, kind: &str) -> bool {
        self.kinds.contains(kind)
    }

    pub fn reset(&mut self) {
        self.tests += 1;
        self.store.begin(self.tests);
        self.answers.clear();
        self.draws.store(0, std::sync::atomic::Ordering::SeqCst);
        // The servers as they were (their member counts): the shard reads
        // these before any event the test fires.
        if self.events && self.tests > 1 {
            self.play.greet_again();
        }
    }

    /// The options of command `name` (its whole name) and their types.
    pub fn option_types(&self, name: &str) -> &[(String, u8)] {
        self.options.get(name).map_or(&[], Vec::as_slice)
    }
}

/// The folder of the tests' stores: in memory where the machine has a
/// memory file system (`/dev/shm`), so that a store's writes, each synced
/// as the store syncs them, cost no disk (a test's store is thrown away
/// with it); else the system's temporary folder.
fn scratch() -> std::io::Result<tempfile::TempDir> {
    let shm = Path::new("/dev/shm");
    match shm.is_dir() {
        true => tempfile::Builder::new().prefix("blkc-test-").tempdir_in(shm).or_else(|_| tempfile::tempdir()),
        false => tempfile::tempdir(),
    }
}

/// `serve` as the tests run it: on a free loopback port, its interactions
/// signed by the stand-in, every request block answered offline (from the
/// test's answers, else the block's sample), its platform the stand-in's.
/// The kinds of a plan's event trees (not timed), and each command's
/// options with their types, as the platform numbers them.
#[allow(clippy::type_complexity)]
fn heard(
    plan: &crate::language::plan::Plan,
) -> (std::collections::HashSet<String>, std::collections::HashMap<String, Vec<(String, u8)>>) {
    use crate::language::plan::TreeKind;
    let kinds = plan.trees.iter().filter(|t| t.kind == TreeKind::Event && t.timer.is_none()).map(|t| t.name.clone());
    let options = plan.trees.iter().filter(|t| t.kind == TreeKind::Command).map(|t| {
        let typed = t.options.iter().map(|o| {
            let kind = serde_json::to_value(crate::discord::registration::option_type(o.kind));
            (o.name.clone(), kind.ok().and_then(|k| k.as_u64()).map_or(3, |k| k as u8))
        });
        (t.name.clone(), typed.collect())
    });
    (kinds.collect(), options.collect())
}

fn config(play: &Play, secrets: Inputs, store: Arc<Fresh>, answers: Arc<Answers>) -> Result<Config, NoStage> {
    let mut inputs = secrets;
    inputs.bot_token = Some(play.token.clone());
    let platform = crate::language::policy::Platform::parse(&play.api())
        .ok_or_else(|| NoStage("the stand-in's address is no URL".to_string()))?;
    let options = Options {
        platform: Some(platform),
        offline: true,
        // The record says each request's body (redacted), for `expect request`.
        verbose: true,
        answers: Some(answers),
        // Which branches ran, for `--coverage`.
        branches: true,
        // Actions reach the stand-in, which records them for `expect`.
        stand_in: true,
        ..Options::default()
    };
    let public_key = crate::discord::signature::PublicKey::from_hex(&play.public_key())
        .map_err(|e| NoStage(format!("the stand-in's key: {e}")))?;
    Ok(Config {
        file: play.path.clone(),
        listen: Some(([127, 0, 0, 1], 0).into()),
        reuse_port: false,
        public_key: Some(public_key),
        global_rate_limit: 50,
        shards: Shards::Auto,
        max_shards: None,
        inputs,
        options,
        store: crate::run::store::Backend::from_arc(store),
        // A busy machine is no reason for a "thinking…" answer the test did
        // not mean (one is read as the platform shows it all the same);
        // within the stand-in's client's 10 s.
        answer_within: Duration::from_secs(8),
        workers: 2,
        queue: 64,
        max_body: 1 << 20,
        max_connections: 64,
        max_connections_per_address: 0,
        drain_timeout: Duration::from_secs(1),
        watch: false,
        log: LogFormat::Text,
        loaded: None,
        on_ready: None,
        hooks: None,
        clock: serve::clock::Clock::system(),
    })
}

/// The tests' store: an SQLite file of each test's own, in the stage's
/// folder, so no test sees another's values, cooldowns or click limits.
#[derive(Debug)]
struct Fresh {
    folder: PathBuf,
    now: Mutex<PathBuf>,
    /// The deliveries taken, kept as serve keeps them.
    seen: SqliteHost,
}

impl Fresh {
    fn new(folder: &Path) -> Fresh {
        Fresh {
            folder: folder.to_path_buf(),
            now: Mutex::new(folder.join("test-0.sqlite3")),
            seen: SqliteHost::new(folder.join("deliveries.sqlite3")),
        }
    }

    /// The store of the test running, as a serving process's.
    fn current(&self) -> SqliteHost {
        SqliteHost::new(self.now.lock().unwrap_or_else(|e| e.into_inner()).clone())
    }

    /// Test `n` begins, with a store of its own.
    fn begin(&self, n: usize) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = self.folder.join(format!("test-{n}.sqlite3"));
    }
}

impl Host for Fresh {
    fn run_store(&self) -> Box<dyn VarStore + Send> {
        Box::new(LazyStore::new(self.now.lock().unwrap_or_else(|e| e.into_inner()).clone()))
    }

    fn remember(&self, key: String, expires_ms: i64) {
        self.seen.remember(key, expires_ms);
    }

    fn finish(&self) {
        self.seen.finish();
    }

    fn recent(&self, now_ms: i64) -> Result<Vec<(String, i64)>, StoreError> {
        self.seen.recent(now_ms)
    }

    fn claim_for_serving(&self) -> Result<Option<ServingClaim>, StoreError> {
        Ok(None)
    }

    fn claim_due(&self, now_ms: i64, until_ms: i64, me: &str) -> Result<Vec<Later>, StoreError> {
        self.current().claim_due(now_ms, until_ms, me)
    }

    fn renew_later(&self, ids: &[String], me: &str, until_ms: i64) -> Result<usize, StoreError> {
        self.current().renew_later(ids, me, until_ms)
    }

    fn done_later(&self, id: &str, me: &str) -> Result<(), StoreError> {
        self.current().done_later(id, me)
    }

    fn next_due(&self) -> Result<Option<i64>, StoreError> {
        self.current().next_due()
    }

    fn take_answer(
        &self,
        wait: (&str, &str),
        text: &str,
        now_ms: i64,
        claim: (i64, &str),
    ) -> Result<Option<Later>, StoreError> {
        self.current().take_answer(wait, text, now_ms, claim)
    }
}
