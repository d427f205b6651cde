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
        Postgres::start_with(false).map(|(server, _)| server)
    }

    /// With `tls`: a server that takes TLS connections only, with a
    /// certificate for `localhost` and 127.0.0.1 from an authority of its
    /// own, whose certificate (PEM) is the path returned.
    fn start_with(tls: bool) -> Option<(Postgres, PathBuf)> {
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
        let mut options = format!(
            "-p {port} -c listen_addresses=127.0.0.1 -k {} -c fsync=off -c max_connections=200",
            base.display()
        );
        let authority = base.join("ca.pem");
        if tls {
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
            options.push_str(" -c ssl=on -c ssl_cert_file=server.crt -c ssl_key_file=server.key");
        }
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
        Some((server, authority))
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
        // Over the server's socket (the TLS server takes TCP over TLS only).
        let socket = self.data.parent().expect("the data folder is in the server's folder");
        let mut client = postgres::Config::new()
            .host_path(socket)
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
        let _ = server.command("pg_ctl").args(["-D"]).arg(&server.data).args(["-m", "immediate", "stop"]).output();
    }
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
    TLS_SERVER.get_or_init(|| Postgres::start_with(true)).as_ref()
}

/// The test PostgreSQL, started on first use; `None` (the test skips, and
/// says so) where the binaries are missing.
pub fn server() -> Option<&'static Postgres> {
    SERVER.get_or_init(Postgres::start).as_ref()
}
