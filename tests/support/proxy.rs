//! A TCP proxy on 127.0.0.1 that can turn into a black hole: it keeps
//! taking the client's bytes and forwards none (no reset, no answer), as a
//! lost network behind a middlebox does. The kernel sees a healthy
//! connection, so only a deadline of blkc's own can notice.

use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct Proxy {
    pub port: u16,
    swallow: Arc<AtomicBool>,
}

impl Proxy {
    /// Forwards connections to `127.0.0.1:target`.
    pub fn start(target: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let swallow = Arc::new(AtomicBool::new(false));
        let s = swallow.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else { continue };
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let (up, down) = (s.clone(), s.clone());
                std::thread::spawn(move || pipe(client, server, &up));
                std::thread::spawn(move || pipe(s2, c2, &down));
            }
        });
        Proxy { port, swallow }
    }

    /// From now on, bytes are taken and dropped (`true`), or forwarded.
    pub fn swallow(&self, on: bool) {
        self.swallow.store(on, Ordering::SeqCst);
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream, swallow: &AtomicBool) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => {
                let _ = to.shutdown(std::net::Shutdown::Write);
                return;
            }
            Ok(n) if swallow.load(Ordering::SeqCst) => {
                let _ = n;
            }
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
        }
    }
}
