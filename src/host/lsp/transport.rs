//! The language server's stdio transport: lsp-server's framing, with the
//! message size capped before anything is allocated. lsp-server's own
//! reader allocates whatever `Content-Length` says (`1000000000000` aborted
//! the process); here a header line, the number of header lines and the
//! body are all bounded, and a message over the limit is read past without
//! being kept, with a line on standard error. Reading and writing run on
//! threads of their own, so the request loop never waits on either.

use std::io::{BufRead, Read, Write};
use std::thread::JoinHandle;

use lsp_server::{Connection, Message};

/// The largest message read: the largest file the checker reads (64 MiB),
/// escaped as a JSON string, with room for the rest of the message.
pub const MAX_MESSAGE: u64 = 2 * crate::language::syntax::MAX_FILE_SIZE as u64;

/// The longest header line, and the most header lines of one message.
const MAX_HEADER_LINE: u64 = 8 * 1024;
const MAX_HEADERS: usize = 32;

/// A connection on standard input and output, and its two threads.
pub fn stdio() -> (Connection, [JoinHandle<()>; 2]) {
    let (to_loop, receiver) = crossbeam_channel::bounded::<Message>(0);
    let (sender, from_loop) = crossbeam_channel::bounded::<Message>(0);
    let reader = std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            match read(&mut input) {
                Ok(Some(Frame::Message(message))) => {
                    let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
                    if to_loop.send(message).is_err() || exit {
                        return;
                    }
                }
                Ok(Some(Frame::Skipped(why))) => eprintln!("blkc lsp: {why}"),
                Ok(None) => return,
                Err(e) => {
                    eprintln!("blkc lsp: cannot read the client's messages: {e}");
                    return;
                }
            }
        }
    });
    let writer = std::thread::spawn(move || {
        let stdout = std::io::stdout();
        let mut output = stdout.lock();
        for message in from_loop {
            if message.write(&mut output).and_then(|()| output.flush()).is_err() {
                return;
            }
        }
    });
    (Connection { sender, receiver }, [reader, writer])
}

/// What one frame of input held.
#[derive(Debug)]
pub enum Frame {
    Message(Message),
    /// A message that could not be taken, and why (it was read past).
    Skipped(String),
}

/// Reads one frame: `None` at the end of the input.
pub fn read(input: &mut impl BufRead) -> std::io::Result<Option<Frame>> {
    let mut length: Option<u64> = None;
    let mut lines = 0;
    loop {
        let mut line = Vec::new();
        let n = input.by_ref().take(MAX_HEADER_LINE).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(None);
        }
        if !line.ends_with(b"\n") {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "a header line is too long"));
        }
        lines += 1;
        if lines > MAX_HEADERS {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "too many header lines"));
        }
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                let parsed = value.trim().parse::<u64>().map_err(|_| {
                    std::io::Error::new(std::io::ErrorKind::InvalidData, format!("a bad Content-Length: {value}"))
                })?;
                length = Some(parsed);
            }
        }
    }
    let Some(length) = length else {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "a message without Content-Length"));
    };
    if length > MAX_MESSAGE {
        let skipped = std::io::copy(&mut input.by_ref().take(length), &mut std::io::sink())?;
        if skipped < length {
            return Ok(None);
        }
        return Ok(Some(Frame::Skipped(format!(
            "a message of {length} bytes is larger than the limit of {MAX_MESSAGE} bytes; it was skipped"
        ))));
    }
    let mut body = Vec::with_capacity(length.min(1 << 20) as usize);
    input.by_ref().take(length).read_to_end(&mut body)?;
    if (body.len() as u64) < length {
        return Ok(None);
    }
    Ok(Some(match serde_json::from_slice::<Message>(&body) {
        Ok(message) => Frame::Message(message),
        Err(e) => Frame::Skipped(format!("a message that is not JSON-RPC was skipped: {e}")),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_length_is_read_past_without_being_allocated() {
        let body = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let text =
            format!("Content-Length: 1000000000000\r\n\r\nshort\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        let mut input = std::io::Cursor::new(text.into_bytes());
        // The input ends before the huge message does: the end of input.
        assert!(read(&mut input).unwrap().is_none());
        let text = format!("Content-Length: 3\r\n\r\n{{}}xContent-Length: {}\r\n\r\n{body}", body.len());
        let mut input = std::io::Cursor::new(text.into_bytes());
        assert!(matches!(read(&mut input).unwrap(), Some(Frame::Skipped(_))));
        assert!(matches!(read(&mut input).unwrap(), Some(Frame::Message(Message::Notification(_)))));
        let long = format!("X-Long: {}\r\n", "a".repeat(10_000));
        assert!(read(&mut std::io::Cursor::new(long.into_bytes())).is_err());
    }
}
