//! The bytes on the wire, as a raw-socket server on 127.0.0.1 records them,
//! and which way a request goes when a proxy is set.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::server::{ProxyServer, RawServer, TestServer};

fn run(dir: &Path, file: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    std::fs::write(dir.join("bot.blk"), file).unwrap();
    Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["run", "bot.blk"])
        .args(args)
        .current_dir(dir)
        .env_remove("BLKC_BOT_TOKEN")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn header<'a>(request: &'a str, name: &str) -> Option<&'a str> {
    let head = request.split("\r\n\r\n").next().unwrap_or_default();
    head.lines().skip(1).find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

#[test]
fn a_request_without_a_body_sends_no_length_and_one_with_a_body_sends_it_exactly() {
    let raw = RawServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = format!(
        "command c {{\n    api g {{ method GET url \"{0}/get\" }}\n    api d {{ method DELETE url \"{0}/item/1\" }}\n    api p {{\n        method POST\n        url \"{0}/items\"\n        body {{ name = \"Ann\", n = 1 }}\n    }}\n}}\n",
        raw.base()
    );
    let out = run(dir.path(), &file, &["--command", "c"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let got = raw.received();
    assert_eq!(got.len(), 3);
    for request in &got[..2] {
        assert_eq!(header(request, "content-length"), None, "{request}");
        assert_eq!(header(request, "transfer-encoding"), None, "{request}");
        assert!(request.ends_with("\r\n\r\n"), "no body: {request:?}");
    }
    assert!(got[0].starts_with("GET /get HTTP/1.1\r\n") && got[1].starts_with("DELETE /item/1 HTTP/1.1\r\n"));
    let post = &got[2];
    let body = r#"{"name":"Ann","n":1}"#;
    assert_eq!(header(post, "content-length"), Some(body.len().to_string().as_str()));
    assert_eq!(header(post, "content-type"), Some("application/json"));
    assert!(post.ends_with(&format!("\r\n\r\n{body}")), "{post:?}");
}

#[test]
fn hand_written_framing_headers_and_keys_with_variables_do_not_check() {
    let dir = tempfile::tempdir().unwrap();
    let file = "command c {\n    option f \"f\"\n    api p {\n        method POST\n        url \"https://api.example.com/x\"\n        headers { Transfer-Encoding = \"chunked\", Host = \"evil.example\" }\n        body { \"{option_f}\" = 1 }\n    }\n}\n";
    std::fs::write(dir.path().join("bot.blk"), file).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_blkc"))
        .args(["check", "bot.blk", "--format", "json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> =
        report["diagnostics"].as_array().unwrap().iter().filter_map(|d| d["code"].as_str()).collect();
    assert_eq!(codes, ["B131", "B131", "B132"]);
}

#[test]
fn a_proxy_is_used_but_the_bot_token_never_crosses_a_plaintext_hop() {
    let target = TestServer::start();
    let proxy = ProxyServer::start();
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("HTTP_PROXY", proxy.base()),
        ("ALL_PROXY", proxy.base()),
        ("BLKC_BOT_TOKEN", "wire.bot.token.0123456789".into()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    // Without the token, plain http goes through the proxy (HTTP_PROXY is honoured).
    let plain = format!("command c {{\n    api a {{ method GET url \"{}/echo\" }}\n}}\n", target.base());
    let out = run(dir.path(), &plain, &["--command", "c"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(proxy.seen().contains("GET /echo"), "the proxy carried the request: {}", proxy.seen());
    assert_eq!(target.received().len(), 1);
    // With the token over plain http (to this machine), it goes direct.
    let with_token = format!(
        "platform \"{0}/api\"\ncommand c {{\n    api a {{\n        method GET\n        url \"{0}/echo\"\n        headers {{ Authorization = \"Bot {{bot_token}}\" }}\n    }}\n}}\n",
        target.base()
    );
    let out = run(dir.path(), &with_token, &["--command", "c"], &env);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(target.received().len(), 2);
    assert_eq!(proxy.seen().matches("CONNECT").count(), 1, "the token request did not use the proxy");
    assert!(!proxy.seen().contains("wire.bot.token"));
}

#[test]
fn through_a_proxy_the_target_is_judged_and_a_loopback_proxy_is_allowed() {
    use crate::support::server::in_private_network;
    // In a private network namespace: a name nobody can resolve there goes
    // to the proxy (which answers for it), and nothing leaves this machine.
    in_private_network(|| {
        crate::support::server::add_address("93.184.216.34/32");
        let internal = TestServer::start();
        // A proxy on loopback, and one on an address of a public range.
        for proxy in [ProxyServer::start(), ProxyServer::start_on("93.184.216.34")] {
            let dir = tempfile::tempdir().unwrap();
            let file = format!(
            "command c {{\n    option host \"h\"\n    api a {{\n        method GET\n        url \"http://{{option_host}}:{}/echo\"\n    }}\n    reply \"{{api_a[response.proxied]}}\"\n}}\n",
            internal.port
        );
            for variable in ["HTTP_PROXY", "ALL_PROXY"] {
                let env = [(variable, proxy.base())];
                let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
                for host in ["127.0.0.1", "localhost", "api.localhost", "2130706433", "10.0.0.1", "198.18.0.1"] {
                    let mut args = vec!["--command", "c", "--format", "json", "--connect-timeout", "2"];
                    let var = format!("option_host={host}");
                    args.extend(["--var", &var]);
                    let out = run(dir.path(), &file, &args, &env);
                    let stdout = String::from_utf8_lossy(&out.stdout);
                    assert_eq!(out.status.code(), Some(3), "{variable} {host}: {stdout}");
                    assert!(stdout.contains("\"B316\""), "{variable} {host}: {stdout}");
                }
                assert!(!proxy.seen().contains("CONNECT"), "the proxy never saw an internal target: {}", proxy.seen());
                assert!(internal.received().is_empty());
                // A public name, through a proxy on loopback: allowed, and the
                // proxy resolves it.
                let out = run(dir.path(), &file, &["--command", "c", "--var", "option_host=api.example.com"], &env);
                assert_eq!(out.status.code(), Some(0), "{variable}: {}", String::from_utf8_lossy(&out.stderr));
                let reply = format!("api.example.com:{}", internal.port);
                assert!(
                    String::from_utf8_lossy(&out.stdout).contains(&reply),
                    "{}",
                    String::from_utf8_lossy(&out.stdout)
                );
                assert!(proxy.seen().contains(&format!("CONNECT {reply}")), "{}", proxy.seen());
                proxy.seen.lock().unwrap().clear();
            }
        }
    });
}
