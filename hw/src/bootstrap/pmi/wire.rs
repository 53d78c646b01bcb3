//! The socket to a PMI server and the two message formats on it: PMI-1's lines of
//! `key=value` words (`cmd=get kvsname=.. key=..\n`), and PMI-2's length-prefixed commands
//! (`%-6d` then `cmd=kvs-get;key=..;`, a `;` inside a value doubled).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use crate::bootstrap::BootstrapError;
use crate::bootstrap::wire::{is_timeout, timeout_until};

/// The longest message either format allows (PMI-2's length field has six digits).
const MAX_MESSAGE_BYTES: usize = 999_999;

/// How long an abort may block on a server that does not read: the caller exits right after.
const ABORT_WRITE_MS: u64 = 1_000;

/// One connection to a PMI server.
#[derive(Debug)]
pub(crate) struct Line {
    stream: UnixStream,
    /// What was read past the end of the last message.
    pending: Vec<u8>,
}

/// A message's `key=value` fields.
pub(crate) type Fields = HashMap<String, String>;

impl Line {
    pub(crate) fn new(stream: UnixStream) -> Self {
        Line {
            stream,
            pending: Vec::new(),
        }
    }

    /// A second `Line` on the same socket (a duplicated descriptor), to say `finalize` at exit
    /// while the bootstrap keeps the first.
    pub(crate) fn try_clone(&self) -> Result<Line, BootstrapError> {
        self.stream
            .try_clone()
            .map(Line::new)
            .map_err(|e| BootstrapError::io("cannot duplicate the PMI server's socket", e))
    }

    /// Sends a PMI-1 line (`text` without its newline) and reads the answer's fields.
    pub(crate) fn ask_v1(
        &mut self,
        text: &str,
        deadline: Instant,
    ) -> Result<Fields, BootstrapError> {
        self.send(format!("{text}\n").as_bytes(), deadline)?;
        self.read_v1(deadline)
    }

    /// Reads one PMI-1 line's fields.
    pub(crate) fn read_v1(&mut self, deadline: Instant) -> Result<Fields, BootstrapError> {
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                let text = String::from_utf8_lossy(&line[..end]);
                return Ok(text
                    .split(' ')
                    .filter_map(|word| word.split_once('='))
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect());
            }
            self.fill(deadline)?;
        }
    }

    /// Sends a PMI-2 command made of `fields` and reads the answer's fields.
    pub(crate) fn ask_v2(
        &mut self,
        fields: &[(&str, &str)],
        deadline: Instant,
    ) -> Result<Fields, BootstrapError> {
        self.send(&v2_message(fields), deadline)?;
        self.read_v2(deadline)
    }

    /// Sends a message and waits for no answer, within a second: for an abort.
    pub(crate) fn tell(&self, message: &[u8]) -> Result<(), BootstrapError> {
        let mut stream = &self.stream;
        stream
            .set_write_timeout(Some(Duration::from_millis(ABORT_WRITE_MS)))
            .and_then(|()| stream.write_all(message))
            .map_err(|e| BootstrapError::io("cannot tell the PMI server to end the job", e))
    }

    fn read_v2(&mut self, deadline: Instant) -> Result<Fields, BootstrapError> {
        while self.pending.len() < 6 {
            self.fill(deadline)?;
        }
        let header = String::from_utf8_lossy(&self.pending[..6]).into_owned();
        let len = header.trim().parse::<usize>().map_err(|_| {
            protocol(format!(
                "a PMI-2 message began with {header:?}, not a length"
            ))
        })?;
        while self.pending.len() < 6 + len {
            self.fill(deadline)?;
        }
        let body: Vec<u8> = self.pending.drain(..6 + len).skip(6).collect();
        Ok(v2_fields(&String::from_utf8_lossy(&body)))
    }

    fn send(&mut self, message: &[u8], deadline: Instant) -> Result<(), BootstrapError> {
        self.stream
            .set_write_timeout(Some(timeout_until(deadline)))
            .and_then(|()| self.stream.write_all(message))
            .map_err(|e| lost(e, "write to"))
    }

    fn fill(&mut self, deadline: Instant) -> Result<(), BootstrapError> {
        if self.pending.len() > MAX_MESSAGE_BYTES {
            return Err(protocol(format!(
                "the PMI server sent {} bytes with no end of message",
                self.pending.len()
            )));
        }
        let mut buf = [0u8; 4096];
        let read = self
            .stream
            .set_read_timeout(Some(timeout_until(deadline)))
            .and_then(|()| self.stream.read(&mut buf));
        match read {
            Ok(0) => Err(lost(
                std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
                "read from",
            )),
            Ok(n) => {
                self.pending.extend_from_slice(&buf[..n]);
                Ok(())
            }
            Err(e) if is_timeout(&e) => Err(BootstrapError::Deadline { waited_for: vec![] }),
            Err(e) => Err(lost(e, "read from")),
        }
    }
}

/// A PMI-2 command: the length as `%-6d`, then `key=value;` per field, `;` in a value doubled.
pub(crate) fn v2_message(fields: &[(&str, &str)]) -> Vec<u8> {
    let body: String = fields
        .iter()
        .map(|(k, v)| format!("{k}={};", v.replace(';', ";;")))
        .collect();
    format!("{:<6}{body}", body.len()).into_bytes()
}

/// A PMI-2 message's fields: `;` ends a field unless doubled.
fn v2_fields(body: &str) -> Fields {
    let mut fields = Fields::new();
    let mut field = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ';' && chars.peek() == Some(&';') {
            chars.next();
            field.push(';');
        } else if c == ';' {
            if let Some((k, v)) = field.split_once('=') {
                fields.insert(k.to_string(), v.to_string());
            }
            field.clear();
        } else {
            field.push(c);
        }
    }
    fields
}

/// An answer's `rc` checked: `Ok` for 0, else the launcher's refusal with its message.
pub(crate) fn check_rc(
    fields: &Fields,
    protocol_name: &'static str,
    what: &str,
) -> Result<(), BootstrapError> {
    match fields.get("rc").map(String::as_str) {
        Some("0") => Ok(()),
        rc => Err(BootstrapError::Launcher {
            bootstrap: protocol_name,
            what: format!(
                "{what} was refused (rc={}{}); check that the launcher serves {protocol_name} \
                 (`srun --mpi=pmi2`, MPICH's `mpiexec`)",
                rc.unwrap_or("missing"),
                fields
                    .get("msg")
                    .or_else(|| fields.get("errmsg"))
                    .map_or_else(String::new, |m| format!(": {m}"))
            ),
        }),
    }
}

/// An answer whose `cmd` is not `expected`.
pub(crate) fn expect_cmd(fields: &Fields, expected: &str) -> Result<(), BootstrapError> {
    match fields.get("cmd") {
        Some(cmd) if cmd == expected => Ok(()),
        other => Err(protocol(format!(
            "the PMI server answered {} where {expected} was due",
            other.map_or("without a cmd", String::as_str)
        ))),
    }
}

fn protocol(what: String) -> BootstrapError {
    BootstrapError::Protocol(what)
}

fn lost(e: std::io::Error, what: &str) -> BootstrapError {
    BootstrapError::io(
        format!("cannot {what} the PMI server; did the launcher end the job?"),
        e,
    )
}

#[cfg(test)]
mod tests {
    use super::{v2_fields, v2_message};

    #[test]
    fn pmi2_messages_double_semicolons_and_read_back() {
        let message = v2_message(&[("cmd", "kvs-put"), ("value", "a;b")]);
        assert_eq!(message, b"23    cmd=kvs-put;value=a;;b;");
        let fields = v2_fields(std::str::from_utf8(&message[6..]).unwrap());
        assert_eq!(fields["cmd"], "kvs-put");
        assert_eq!(fields["value"], "a;b");
    }
}
