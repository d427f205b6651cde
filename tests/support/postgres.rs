//! A throwaway PostgreSQL for the tests, started from this machine's
//! binaries: `initdb` into a temporary folder, `pg_ctl` on a free loopback
//! port, stopped and its folder removed when the test process exits (and
//! the folders of servers whose test process was killed, when the next
//! one starts). `initdb` and `postgres` refuse to run as root, so under
//! root they run as the `postgres` user. No mock of the database anywhere.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

pub struct Postgres {
    pub port: u16,
    /// The server's folder: its data folder, log, socket and certificates.
    base: PathBuf,
    data: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
    /// The server's options, to start it again.
    options: String,
}

/// What a test server is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Setup {
    /// Shared by the tests: fast (no fsync), plain TCP.
    Shared,
    /// TLS only, with a certificate of the tests' own authority.
    Tls,
    /// One test's own, durable (fsync on), to be crashed and started again.
    Durable,
}

static SERVER: OnceLock<Option<Postgres>> = OnceLock::new();
static TLS_SERVER: OnceLock<Option<(Postgres, PathBuf)>> = OnceLock::new();
static DATABASES: AtomicUsize = AtomicUsize::new(0);

fn bin_dir() -> Option<PathBuf> {
    let from_config = Command::new("pg_config").arg("--bindir").output().ok().filter(|o| o.status.success());
    if let Some(o) = from_config {
        let dir = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        if dir.join("initdb").exists() {
            return Some(dir);
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists())
        .collect();
    found.sort();
    found.pop()
}

impl Postgres {
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    fn start() -> Option<Postgres> {
        Postgres::start_with(Setup::Shared).map(|(server, _)| server)
    }

    /// A server for `setup`. With [`Setup::Tls`], it takes TLS connections
    /// only, with a certificate for `localhost` and 127.0.0.1 from an
    /// authority of its own, whose certificate (PEM) is the path returned.
    fn start_with(setup: Setup) -> Option<(Postgres, PathBuf)> {
        let Some(bin) = bin_dir() else {
            // Under CI a test that cannot run its real component fails
            // (.ci/run installs PostgreSQL): a green run must have tested.
            assert!(
                std::env::var_os("CI").is_none(),
                "PostgreSQL's binaries are not installed, and CI is set: the PostgreSQL store tests cannot run"
            );
            eprintln!("PostgreSQL's binaries are not installed; the PostgreSQL store tests skip");
            return None;
        };
        // SAFETY: geteuid only reads this process's effective user.
        let as_postgres = unsafe { libc::geteuid() } == 0;
        remove_abandoned();
        let base = tempfile::Builder::new().prefix("blkc-pg-").tempdir().ok()?.keep();
        let data = base.join("data");
        let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let fsync = if setup == Setup::Durable { "on" } else { "off" };
        let mut options = format!(
            "-p {port} -c listen_addresses=127.0.0.1 -k {} -c fsync={fsync} -c max_connections=200 \
             -c min_wal_size=32MB -c max_wal_size=64MB",
            base.display()
        );
        if setup == Setup::Tls {
            options.push_str(" -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key");
        }
        let server = Postgres { port, base: base.clone(), data: data.clone(), bin, as_postgres, options };
        if as_postgres {
            let ok = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&base).status();
            assert!(ok.is_ok_and(|s| s.success()), "cannot give {} to the postgres user", base.display());
        }
        let out = server
            .command("initdb")
            .args(["-A", "trust", "-U", "blkc", "-E", "UTF8", "--no-sync", "-D"])
            .arg(&data)
            .output()
            .expect("initdb runs");
        assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
        let authority = base.join("ca.pem");
        if setup == Setup::Tls {
            let (ca, certificate, key) = certificates();
            std::fs::write(&authority, ca).unwrap();
            std::fs::write(data.join("server.crt"), certificate).unwrap();
            std::fs::write(data.join("server.key"), key).unwrap();
            // TLS or nothing, over TCP.
            std::fs::write(data.join("pg_hba.conf"), "local all all trust\nhostssl all all 127.0.0.1/32 trust\n")
                .unwrap();
            std::fs::set_permissions(data.join("server.key"), std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .unwrap();
            if as_postgres {
                let ok = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&base).status();
                assert!(ok.is_ok_and(|s| s.success()));
            }
        }
        server.run();
        Some((server, authority))
    }

    /// Starts the server (again).
    fn run(&self) {
        let base = &self.base;
        let out = self
            .command("pg_ctl")
            .args(["-w", "-t", "60", "-D"])
            .arg(&self.data)
            .args(["-l"])
            .arg(base.join("log"))
            .args(["-o", &self.options, "start"])
            .output()
            .expect("pg_ctl runs");
        assert!(out.status.success(), "pg_ctl start: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Stops the server as a crash would: every process at once, nothing
    /// written out (`pg_ctl stop -m immediate`; it recovers from its log
    /// when started again).
    #[allow(dead_code)] // the bench includes this file too
    pub fn crash(&self) {
        let _ = self.command("pg_ctl").args(["-D"]).arg(&self.data).args(["-m", "immediate", "stop"]).output();
    }

    /// Starts a crashed server again.
    #[allow(dead_code)] // the bench includes this file too
    pub fn restart(&self) {
        self.run();
    }

    /// A new database of its own for one test, with the store's tables
    /// (as `blkc vars migrate` creates them).
    pub fn store(&self) -> String {
        let url = self.database();
        blkc::run::store::postgres::migrate(&url).expect("the store's tables are created");
        url
    }

    /// A new, empty database of its own for one test.
    pub fn database(&self) -> String {
        let n = DATABASES.fetch_add(1, Ordering::SeqCst);
        let name = format!("t{}_{n}", std::process::id());
        // Over the server's socket (the TLS server takes TCP over TLS only).
        let mut client = postgres::Config::new()
            .host_path(&self.base)
            .port(self.port)
            .user("blkc")
            .dbname("postgres")
            .connect(postgres::NoTls)
            .expect("connect to the test PostgreSQL");
        client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        format!("postgres://blkc@127.0.0.1:{}/{name}", self.port)
    }
}

extern "C" fn stop() {
    let plain = SERVER.get().and_then(Option::as_ref);
    let tls = TLS_SERVER.get().and_then(Option::as_ref).map(|(s, _)| s);
    for server in [plain, tls].into_iter().flatten() {
        server.remove();
    }
}

/// Stops the servers of the statics when the test process exits.
fn stop_at_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: registers a plain function to run at exit.
    ONCE.call_once(|| unsafe {
        libc::atexit(stop);
    });
}

/// A durable server of one test's own, which it may crash and start again;
/// stopped when dropped.
#[allow(dead_code)] // the bench includes this file too
pub fn durable_server() -> Option<Postgres> {
    Postgres::start_with(Setup::Durable).map(|(server, _)| server)
}

impl Postgres {
    /// Stops the server and removes its folder.
    fn remove(&self) {
        self.crash();
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Removes the folders of test servers that no process runs any more and
/// that nothing has written to for ten minutes: a test process that was
/// killed stops nothing at exit, and every folder left is a few hundred
/// megabytes. A server another test process is starting or running now is
/// left alone.
fn remove_abandoned() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else { return };
    let quiet = |path: &std::path::Path| {
        let modified = std::fs::metadata(path).and_then(|m| m.modified());
        modified.is_ok_and(|m| m.elapsed().is_ok_and(|age| age > std::time::Duration::from_secs(600))) || !path.exists()
    };
    for entry in entries.flatten() {
        let base = entry.path();
        let named = entry.file_name().to_str().is_some_and(|n| n.starts_with("blkc-pg-"));
        if !named || !quiet(&base) || !quiet(&base.join("log")) || running(&base.join("data/postmaster.pid")) {
            continue;
        }
        let _ = std::fs::remove_dir_all(&base);
    }
}

/// Whether the process a `postmaster.pid` names is alive.
fn running(pid_file: &std::path::Path) -> bool {
    let Ok(text) = std::fs::read_to_string(pid_file) else { return false };
    let Some(pid) = text.lines().next().and_then(|l| l.trim().parse::<libc::pid_t>().ok()) else { return false };
    // SAFETY: signal 0 only asks whether the process exists.
    pid > 0 && unsafe { libc::kill(pid, 0) } == 0
}

/// A certificate authority, and a server certificate and key it signed
/// for `localhost` and 127.0.0.1 (PEM).
fn certificates() -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "blkc tests' authority");
    let ca = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let server = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let server = server.signed_by(&key, &ca, &ca_key).unwrap();
    (ca.pem(), server.pem(), key.serialize_pem())
}

/// The test PostgreSQL that takes TLS connections only, and its
/// authority's certificate; started on first use.
#[allow(dead_code)] // the bench includes this file too
pub fn tls_server() -> Option<&'static (Postgres, PathBuf)> {
    stop_at_exit();
    TLS_SERVER.get_or_init(|| Postgres::start_with(Setup::Tls)).as_ref()
}

/// The test PostgreSQL, started on first use; `None` (the test skips, and
/// says so) where the binaries are missing.
pub fn server() -> Option<&'static Postgres> {
    stop_at_exit();
    SERVER.get_or_init(Postgres::start).as_ref()
}
