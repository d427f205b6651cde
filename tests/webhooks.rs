//! Issue 52: webhook events under `blkc serve`: another service's POST,
//! signed as GitHub, Stripe or a bearer token sign, runs its event; a
//! wrong signature is 401 and nothing runs; an oversized body is 413; a
//! delivery runs once across two processes sharing PostgreSQL.

use blkc::base::webhook::Scheme;

use crate::serve::{serve, Served};
use crate::support::platform::TestPlatform;

const TOKEN: &str = "bot-token-abcdefghijklmnop";
const SECRET: &str = "whsec-0123456789abcdef";

const PUSH: &str = r#"event push webhook "/hooks/github" signed github secret "<GITHUB_SECRET>" {
    for commit in api_webhook[response.commits] limit 10 join "\n" into lines {
        text "- {commit[message]}"
    }
    send to "900" "{api_webhook[headers.x-github-event]} to {api_webhook[response.repository.full_name]}:\n{lines}"
}

event paid webhook "/hooks/stripe" signed stripe secret "<STRIPE_SECRET>" {
    send to "901" "{api_webhook[response.type]}: {api_webhook[response.data.object.amount]}"
}
"#;

fn env() -> Vec<(&'static str, &'static str)> {
    vec![("BLKC_BOT_TOKEN", TOKEN), ("BLKC_SECRET_GITHUB_SECRET", SECRET), ("BLKC_SECRET_STRIPE_SECRET", SECRET)]
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// A bot with a bearer webhook that reads the header the token came in.
fn served_bearer(platform: &TestPlatform) -> Served {
    let program = r#"event deploy webhook "/hooks/deploy" signed bearer secret "<DEPLOY_TOKEN>" {
    send to "902" "{api_webhook[response.version]} [{api_webhook[headers.authorization]}] [{api_webhook[headers.x-kind]}]"
}
"#;
    let env = [("BLKC_BOT_TOKEN", TOKEN), ("BLKC_SECRET_DEPLOY_TOKEN", SECRET)];
    serve(program, platform, None, &[], &env)
}

/// POSTs `body` to `path` of `served` with `headers`: the status.
fn post(served: &Served, path: &str, body: &[u8], headers: &[(&str, String)]) -> u16 {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut req = agent.post(&format!("{}{path}", served.url)).header("Content-Type", "application/json");
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    req.send(body).map(|r| r.status().as_u16()).unwrap_or(0)
}

/// The status of a POST whose `Content-Length` is past the bound (its
/// body never sent: the answer comes first).
fn declared_too_large(served: &Served, path: &str) -> u16 {
    use std::io::{Read as _, Write as _};
    let address = served.url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        blkc::base::webhook::MAX_BODY + 1
    );
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = [0u8; 12];
    stream.read_exact(&mut answer).unwrap();
    String::from_utf8_lossy(&answer[9..12]).parse().unwrap_or(0)
}

fn signed(scheme: Scheme, body: &[u8]) -> Vec<(&'static str, String)> {
    scheme.sign(SECRET, body, now())
}

#[test]
fn a_signed_post_runs_its_event_and_a_wrong_one_is_refused_before_it_is_read() {
    let platform = TestPlatform::start();
    let served = serve(PUSH, &platform, None, &[], &env());
    let body = br#"{"repository":{"full_name":"ada/blkc"},"commits":[{"message":"Fix the parser"},{"message":"Add webhooks"}]}"#;
    let mut headers = signed(Scheme::Github, body);
    headers.push(("X-GitHub-Event", "push".into()));
    headers.push(("X-GitHub-Delivery", "d-1".into()));
    assert_eq!(post(&served, "/hooks/github", body, &headers), 202);
    let sent = platform.wait_for("/channels/900/messages", 1);
    assert_eq!(sent.len(), 1, "{}", served.log());
    assert_eq!(sent[0].body["content"], "push to ada/blkc:\n- Fix the parser\n- Add webhooks");
    // A wrong signature, none, another secret's, a tampered body: 401,
    // and nothing runs. Not JSON, but signed: 400.
    let other = Scheme::Github.sign("another-secret-entirely", body, now());
    assert_eq!(post(&served, "/hooks/github", body, &other), 401);
    assert_eq!(post(&served, "/hooks/github", body, &[]), 401);
    assert_eq!(post(&served, "/hooks/github", br#"{"repository":{"full_name":"evil"}}"#, &headers), 401);
    let not_json = b"{not json";
    assert_eq!(post(&served, "/hooks/github", not_json, &signed(Scheme::Github, not_json)), 400);
    // Too large: 413 on what it says it is, before a byte of it is held.
    assert_eq!(declared_too_large(&served, "/hooks/github"), 413);
    // No event on this path; a GET on a webhook's.
    assert_eq!(post(&served, "/hooks/gitlab", body, &headers), 404);
    // Stripe: signed with a time; one outside the window is a replay.
    let event = br#"{"id":"evt_1","type":"charge.succeeded","data":{"object":{"amount":2000}}}"#;
    assert_eq!(post(&served, "/hooks/stripe", event, &signed(Scheme::Stripe, event)), 202);
    let stale = Scheme::Stripe.sign(SECRET, event, now() - 3600);
    assert_eq!(post(&served, "/hooks/stripe", event, &stale), 401);
    let sent = platform.wait_for("/channels/901/messages", 1);
    assert_eq!(sent[0].body["content"], "charge.succeeded: 2000");
    let log = served.wait_log("webhook event");
    assert!(log.contains("why=\"a signature that is not the body's with the secret\""), "{log}");
    assert!(!log.contains(SECRET), "{log}");
    // A bearer webhook: its token checked, and never given to the run.
    let hook = served_bearer(&platform);
    let deploy = br#"{"version":"2.1.0"}"#;
    let mut with_kind = signed(Scheme::Bearer, deploy);
    with_kind.push(("X-Kind", "push".into()));
    assert_eq!(post(&hook, "/hooks/deploy", deploy, &with_kind), 202);
    let sent = platform.wait_for("/channels/902/messages", 1);
    let said = sent[0].body["content"].as_str().unwrap_or_default();
    assert!(said.starts_with("2.1.0 [") && said.ends_with("] [push]") && !said.contains(SECRET), "{said}");
    let metrics = ureq::get(&format!("{}/metrics", served.url)).call().unwrap().body_mut().read_to_string().unwrap();
    for line in [
        "blkc_events_total{kind=\"webhook:push\",outcome=\"ran\"} 1",
        "blkc_events_total{kind=\"webhook:push\",outcome=\"unauthorized\"} 3",
        "blkc_events_total{kind=\"webhook:push\",outcome=\"too_large\"} 1",
        "blkc_events_total{kind=\"webhook:paid\",outcome=\"unauthorized\"} 1",
    ] {
        assert!(metrics.contains(line), "{line} in {metrics}");
    }
    // Only the three good deliveries ran.
    assert_eq!(platform.calls().iter().filter(|c| c.path.contains("/messages")).count(), 3);
}

#[test]
fn a_delivery_runs_once_across_two_processes_sharing_postgres() {
    let Some(pg) = crate::support::postgres::server() else { return };
    let url = pg.store();
    let platform = TestPlatform::start();
    let servers: Vec<Served> = (0..2).map(|_| serve(PUSH, &platform, None, &["--store", &url], &env())).collect();
    let body = br#"{"repository":{"full_name":"ada/blkc"},"commits":[]}"#;
    let mut headers = signed(Scheme::Github, body);
    headers.push(("X-GitHub-Event", "push".into()));
    headers.push(("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958".into()));
    // The sender retries the same delivery, to each process.
    for served in servers.iter().chain(servers.iter()) {
        assert_eq!(post(served, "/hooks/github", body, &headers), 202);
    }
    // Another delivery runs too.
    let mut again = headers.clone();
    again.retain(|(k, _)| *k != "X-GitHub-Delivery");
    again.push(("X-GitHub-Delivery", "another".into()));
    assert_eq!(post(&servers[1], "/hooks/github", body, &again), 202);
    // Every copy has ended, ran or taken: the count is final.
    let taken = || servers.iter().map(|s| s.log().matches("already taken by another process").count()).sum::<usize>();
    crate::support::wait::eventually(30, || taken() >= 3);
    assert_eq!(taken(), 3, "{}\n{}", servers[0].log(), servers[1].log());
    assert_eq!(platform.wait_for("/channels/900/messages", 2).len(), 2);
}
