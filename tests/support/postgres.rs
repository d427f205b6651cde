//! A throwaway PostgreSQL for the tests, started from this machine's
//! binaries: `initdb` into a temporary folder, `pg_ctl` on a free loopback
//! port, stopped when the test process exits. `initdb` and `postgres`
//! refuse to run as root, so under root they run as the `postgres` user.
//! No mock of the database anywhere.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

pub struct Postgres {
    pub port: u16,
    data: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
}

static SERVER: OnceLock<Option<Postgres>> = OnceLock::new();
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
        let Some(bin) = bin_dir() else {
            eprintln!("PostgreSQL's binaries are not installed; the PostgreSQL store tests skip");
            return None;
        };
        // SAFETY: geteuid only reads this process's effective user.
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let base = tempfile::Builder::new().prefix("blkc-pg-").tempdir().ok()?.keep();
        let data = base.join("data");
        let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let server = Postgres { port, data: data.clone(), bin, as_postgres };
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
        let options = format!(
            "-p {port} -c listen_addresses=127.0.0.1 -k {} -c fsync=off -c max_connections=200",
            base.display()
        );
        let out = server
            .command("pg_ctl")
            .args(["-w", "-t", "60", "-D"])
            .arg(&data)
            .args(["-l"])
            .arg(base.join("log"))
            .args(["-o", &options, "start"])
            .output()
            .expect("pg_ctl runs");
        assert!(out.status.success(), "pg_ctl start: {}", String::from_utf8_lossy(&out.stderr));
        // SAFETY: registers a plain function to run at exit.
        unsafe {
            libc::atexit(stop);
        }
        Some(server)
    }

    /// A new database of its own for one test, with the store's tables
    /// (as `blkc vars migrate` creates them).
    pub fn store(&self) -> String {
        let url = self.database();
        blkc::store::postgres::migrate(&url).expect("the store's tables are created");
        url
    }

    /// A new, empty database of its own for one test.
    pub fn database(&self) -> String {
        let n = DATABASES.fetch_add(1, Ordering::SeqCst);
        let name = format!("t{}_{n}", std::process::id());
        let url = format!("postgres://blkc@127.0.0.1:{}/postgres", self.port);
        let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connect to the test PostgreSQL");
        client.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        format!("postgres://blkc@127.0.0.1:{}/{name}", self.port)
    }
}

extern "C" fn stop() {
    if let Some(Some(server)) = SERVER.get() {
        let _ = server.command("pg_ctl").args(["-D"]).arg(&server.data).args(["-m", "immediate", "stop"]).output();
    }
}

/// The test PostgreSQL, started on first use; `None` (the test skips, and
/// says so) where the binaries are missing.
pub fn server() -> Option<&'static Postgres> {
    SERVER.get_or_init(Postgres::start).as_ref()
}
