//! Issue: requests nobody else can steer. Chat users' values and servers'
//! redirects may not change where a request goes or what it carries. Every
//! case runs the real binary against real servers on 127.0.0.1; the
//! internal-address cases use only loopback spellings, so nothing here can
//! leave this machine even if a guard failed.

use crate::support::cli::{run_json, Ran};
use crate::support::server::TestServer;
use std::path::Path;

const KEY: &str = "steering-secret-key-0123456789";

fn run(dir: &Path, file: &str, args: &[&str]) -> Ran {
    let mut all = vec!["--connect-timeout", "2"];
    all.extend_from_slice(args);
    run_json(dir, file, &all, &[("BLKC_SECRET_KEY", KEY)])
}

#[test]
fn a_value_right_after_the_host_cannot_change_the_host() {
    let server = TestServer::start();
    let thief = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let steal = format!("option_path=@127.0.0.1:{}/steal", thief.port);
    // With a secret the file does not check: nothing runs.
    let with_key = format!(
        "command c {{\n    option path \"p\"\n    api a {{\n        method GET\n        url \"{}{{option_path}}\"\n        headers {{ X-Api-Key = \"<KEY>\" }}\n    }}\n}}\n",
        server.base()
    );
    let ran = run(dir.path(), &with_key, &["--command", "c", "--var", &steal]);
    assert_eq!((ran.code, ran.check_codes()), (1, vec!["B127"]));
    // A templated host with a secret, likewise.
    let region = "command c {\n    option region \"r\"\n    api a {\n        method GET\n        url \"https://{option_region}.example.com/v1\"\n        headers { X-Api-Key = \"<KEY>\" }\n    }\n}\n";
    let ran = run(dir.path(), region, &["--command", "c", "--var", "option_region=x"]);
    assert_eq!((ran.code, ran.check_codes()), (1, vec!["B127"]));
    // Without a secret the run refuses the value.
    let without = with_key.replace("        headers { X-Api-Key = \"<KEY>\" }\n", "");
    let ran = run(dir.path(), &without, &["--command", "c", "--var", &steal]);
    assert_eq!((ran.code, ran.error_code()), (3, "B314"), "{}", ran.stderr);
    for value in [format!("option_path=:{}/x", thief.port), "option_path=/x".into(), "option_path=.evil.example".into()]
    {
        let ran = run(dir.path(), &without, &["--command", "c", "--var", &value, "--allow-private-network"]);
        assert_ne!(ran.code, 0, "{value}");
    }
    assert!(thief.received().is_empty() && server.received().is_empty(), "nothing was sent anywhere");
}

#[test]
fn a_redirect_to_another_origin_never_carries_a_secret_body() {
    let server = TestServer::start();
    let other = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = format!(
        "command c {{\n    api a {{\n        method POST\n        url \"{}/redirect-to/{}\"\n        body {{ key = \"<KEY>\", n = 1 }}\n    }}\n    reply \"{{api_a[status]}}\"\n}}\n",
        server.base(),
        other.port
    );
    let ran = run(dir.path(), &file, &["--command", "c", "--allow-private-network"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.warnings(), ["B309"], "the 307 is the response, and the warning says why");
    assert!(other.received().is_empty(), "the body with the key never reached the other origin");
    assert!(server.received()[0].body.contains(KEY), "the first origin did get it");
}

#[test]
fn a_dot_segment_from_a_value_is_refused() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = format!(
        "command c {{\n    option id \"id\"\n    api a {{\n        method DELETE\n        url \"{}/echo/api/v1/users/{{option_id}}/sessions\"\n    }}\n}}\n",
        server.base()
    );
    for value in ["..", ".", "%2E%2E", "%2e", ".%2E"] {
        let ran = run(dir.path(), &file, &["--command", "c", "--var", &format!("option_id={value}")]);
        assert_eq!((ran.code, ran.error_code()), (3, "B315"), "{value}: {}", ran.stderr);
    }
    assert!(server.received().is_empty());
    // Dots inside a segment are an ordinary value.
    let ran = run(dir.path(), &file, &["--command", "c", "--var", "option_id=a..b"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(server.received()[0].url, "/echo/api/v1/users/a..b/sessions");
}

#[test]
fn a_host_from_a_value_or_a_redirect_never_reaches_an_internal_address() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let file = format!(
        "command c {{\n    option host \"h\"\n    api a {{\n        method GET\n        url \"http://{{option_host}}:{}/echo\"\n    }}\n    reply \"{{api_a[response.path]}}\"\n}}\n",
        server.port
    );
    // Every spelling of this machine the URL parser accepts.
    for host in ["127.0.0.1", "localhost", "0.0.0.0", "2130706433", "0x7f.1", "127.1", "017700000001"] {
        let ran = run(dir.path(), &file, &["--command", "c", "--var", &format!("option_host={host}")]);
        assert_eq!((ran.code, ran.error_code()), (3, "B316"), "{host}: {}", ran.stderr);
    }
    // An IPv6 literal cannot even be written as a value (brackets, colons).
    let ran = run(dir.path(), &file, &["--command", "c", "--var", "option_host=[::ffff:127.0.0.1]"]);
    assert_eq!(ran.error_code(), "B314");
    assert!(server.received().is_empty(), "nothing reached the server");
    // The author allows it: by flag, or in the block.
    let ran = run(dir.path(), &file, &["--command", "c", "--var", "option_host=127.0.0.1", "--allow-private-network"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let allowed = file.replace("/echo\"\n", "/echo\"\n        allow private_network\n");
    let ran = run(dir.path(), &allowed, &["--command", "c", "--var", "option_host=localhost"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(server.received().len(), 2);
}

#[test]
fn an_address_of_this_machine_is_refused_whatever_its_range() {
    use crate::support::server::{add_address, in_private_network};
    // In a private network namespace, `lo` also holds an address of a
    // public range, and a server listens on every interface: a value (or a
    // redirect) naming that address would reach this machine.
    in_private_network(|| {
        add_address("93.184.216.34/32");
        add_address("2606:2800:220:1::1/128");
        let server = TestServer::start_on("0.0.0.0");
        let dir = tempfile::tempdir().unwrap();
        let file = format!(
            "command c {{\n    option host \"h\"\n    api a {{\n        method GET\n        url \"http://{{option_host}}:{}/echo\"\n    }}\n}}\n",
            server.port
        );
        let ran = run(dir.path(), &file, &["--command", "c", "--var", "option_host=93.184.216.34"]);
        assert_eq!((ran.code, ran.error_code()), (3, "B316"), "{}", ran.stderr);
        let redirect = format!(
            "command c {{\n    api a {{\n        method GET\n        url \"{}/location/302?to=http%3A%2F%2F93.184.216.34%3A{}%2Fecho\"\n    }}\n}}\n",
            server.base(),
            server.port
        );
        let ran = run(dir.path(), &redirect, &["--command", "c"]);
        assert_eq!((ran.code, ran.error_code()), (3, "B316"), "{}", ran.stderr);
        assert_eq!(server.received().len(), 1, "only the file's own request reached the server");
        // Where the file itself names the address, it is the author's choice.
        let own = file.replace("{option_host}", "93.184.216.34");
        let ran = run(dir.path(), &own, &["--command", "c"]);
        assert_eq!(ran.code, 0, "{}", ran.stderr);
    });
}

#[test]
fn special_purpose_addresses_are_refused_by_the_address_they_embed() {
    use crate::support::server::{add_address, in_private_network};
    // Each address is put on `lo` of a private namespace, so a guard that
    // let it through would be caught reaching the server.
    in_private_network(|| {
        for address in ["198.18.0.1/32", "192.0.0.8/32", "2002:7f00:1::1/128", "2001:db8::1/128"] {
            add_address(address);
        }
        let server = TestServer::start_on("[::]");
        let dir = tempfile::tempdir().unwrap();
        for location in [
            format!("http://198.18.0.1:{}/echo", server.port),
            format!("http://192.0.0.8:{}/echo", server.port),
            format!("http://[2002:7f00:1::1]:{}/echo", server.port),
            format!("http://[2001:db8::1]:{}/echo", server.port),
            format!("http://[64:ff9b::7f00:1]:{}/echo", server.port),
            format!("http://[2001:0:7f00:1::]:{}/echo", server.port),
        ] {
            let to = percent_encoding::utf8_percent_encode(&location, percent_encoding::NON_ALPHANUMERIC);
            let file = format!(
                "command c {{\n    api a {{\n        method GET\n        url \"{}/location/302?to={to}\"\n    }}\n}}\n",
                server.base()
            );
            let ran = run(dir.path(), &file, &["--command", "c"]);
            assert_eq!((ran.code, ran.error_code()), (3, "B316"), "{location}: {}", ran.stderr);
        }
        let reached: Vec<String> = server.received().iter().map(|r| r.url.clone()).collect();
        assert!(reached.iter().all(|u| u.starts_with("/location")), "{reached:?}");
    });
}

#[test]
fn a_redirect_chooses_no_internal_address() {
    let server = TestServer::start();
    let target = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    let to = |url: String| percent_encoding::utf8_percent_encode(&url, percent_encoding::NON_ALPHANUMERIC).to_string();
    for location in [
        format!("http://127.0.0.1:{}/echo", target.port),
        format!("http://[::ffff:127.0.0.1]:{}/echo", target.port),
        format!("http://2130706433:{}/echo", target.port),
    ] {
        let file = format!(
            "command c {{\n    api a {{\n        method GET\n        url \"{}/location/302?to={}\"\n    }}\n}}\n",
            server.base(),
            to(location.clone())
        );
        let ran = run(dir.path(), &file, &["--command", "c"]);
        assert_eq!((ran.code, ran.error_code()), (3, "B316"), "{location}: {}", ran.stderr);
    }
    assert!(target.received().is_empty(), "the redirect's internal address was never reached");
    // The same origin as the file's URL is the author's choice: followed.
    let file = format!(
        "command c {{\n    api a {{\n        method GET\n        url \"{}/location/302?to=/echo\"\n    }}\n    reply \"{{api_a[response.path]}}\"\n}}\n",
        server.base()
    );
    let ran = run(dir.path(), &file, &["--command", "c"]);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
}

#[test]
fn a_connection_the_file_opened_is_not_reused_by_a_host_from_a_value() {
    let server = TestServer::start();
    let dir = tempfile::tempdir().unwrap();
    // The author's own block reaches this machine; a user's value then names
    // the same host and port, which a pooled connection would serve unchecked.
    let file = format!(
        "command c {{\n    option host \"h\"\n    api mine {{ method GET url \"{}/echo\" }}\n    api theirs {{ method GET url \"http://{{option_host}}:{}/echo/other\" }}\n}}\n",
        server.base(),
        server.port
    );
    let ran = run(dir.path(), &file, &["--command", "c", "--var", "option_host=127.0.0.1"]);
    assert_eq!((ran.code, ran.error_code()), (3, "B316"), "{}", ran.stderr);
    assert_eq!(server.received().len(), 1, "only the author's request was sent");
}
