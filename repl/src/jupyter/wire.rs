//! The kernel's side of the wire: the connection file, the five ZeroMQ sockets it names, and
//! the tasks that move messages between them and the rest of the kernel. Signing, the
//! `<IDS|MSG>` framing and the message types are `jupyter-zmq-client`'s and
//! `jupyter-protocol`'s; what is here is what a kernel adds: a message that cannot be read is
//! logged and skipped (the kernel never dies of one), iopub messages go out in the order they
//! were made, and the heartbeat answers whatever the rest is doing.

use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use jupyter_protocol::{ConnectionInfo, JupyterMessage, JupyterMessageContent};
use jupyter_zmq_client::{
    create_kernel_control_connection, create_kernel_heartbeat_connection,
    create_kernel_iopub_connection, create_kernel_shell_connection, create_kernel_stdin_connection,
    Connection, KernelHeartbeatConnection, KernelIoPubConnection, KernelStdinConnection,
    RouterRecvConnection, RouterSendConnection, RuntimeError,
};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

/// The connection file Jupyter wrote for this kernel (`{connection_file}` in kernel.json).
pub fn read_connection_file(path: &Path) -> Result<ConnectionInfo, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the connection file `{}`: {e}", path.display()))?;
    let info: ConnectionInfo = serde_json::from_str(&text)
        .map_err(|e| format!("`{}` is not a connection file: {e}", path.display()))?;
    // `jupyter-zmq-client` signs with HMAC-SHA256, the scheme every Jupyter client uses by
    // default; a client that asks for another would reject every message.
    if !info.key.is_empty() && info.signature_scheme != "hmac-sha256" {
        return Err(format!(
            "the connection file asks for the signature scheme `{}`; the acc kernel signs \
             with `hmac-sha256`",
            info.signature_scheme
        ));
    }
    Ok(info)
}

/// The sockets, bound, each half where a task of its own uses it.
pub struct Sockets {
    pub shell_in: RouterRecvConnection,
    pub shell_out: RouterSendConnection,
    pub control_in: RouterRecvConnection,
    pub control_out: RouterSendConnection,
    /// Bound so that clients can connect; the kernel never asks for input.
    pub stdin: KernelStdinConnection,
    pub iopub: KernelIoPubConnection,
    pub heartbeat: KernelHeartbeatConnection,
}

/// Binds every socket of `info`; `session` names this kernel's session in the messages it
/// signs.
pub async fn bind(info: &ConnectionInfo, session: &str) -> Result<Sockets, String> {
    let bind_error = |channel: &str, e: RuntimeError| {
        format!(
            "cannot open the {channel} socket on {}: {e}",
            match channel {
                "shell" => info.shell_url(),
                "control" => info.control_url(),
                "stdin" => info.stdin_url(),
                "iopub" => info.iopub_url(),
                _ => info.hb_url(),
            }
        )
    };
    let (shell_out, shell_in) = create_kernel_shell_connection(info, session)
        .await
        .map_err(|e| bind_error("shell", e))?
        .split();
    let (control_out, control_in) = create_kernel_control_connection(info, session)
        .await
        .map_err(|e| bind_error("control", e))?
        .split();
    let stdin = create_kernel_stdin_connection(info, session)
        .await
        .map_err(|e| bind_error("stdin", e))?;
    let iopub = create_kernel_iopub_connection(info, session)
        .await
        .map_err(|e| bind_error("iopub", e))?;
    let heartbeat = create_kernel_heartbeat_connection(info)
        .await
        .map_err(|e| bind_error("heartbeat", e))?;
    Ok(Sockets {
        shell_in,
        shell_out,
        control_in,
        control_out,
        stdin,
        iopub,
        heartbeat,
    })
}

/// Why a read gave no message.
pub enum ReadError {
    /// The socket is gone (the kernel is ending): stop reading it.
    Closed(String),
    /// This message was not a valid Jupyter message (a bad signature, a missing part,
    /// content that does not fit its type): skip it.
    Bad(String),
}

/// The next message of a router socket (shell or control).
pub async fn read(socket: &mut RouterRecvConnection) -> Result<JupyterMessage, ReadError> {
    socket.read().await.map_err(|e| match e {
        RuntimeError::ZmqError(_) | RuntimeError::IoError(_) => ReadError::Closed(e.to_string()),
        RuntimeError::VerifyError(_) => {
            ReadError::Bad("its signature does not match the connection file's key".into())
        }
        e => ReadError::Bad(e.to_string()),
    })
}

/// What an outbox's task does next.
enum Outgoing {
    Send(Box<JupyterMessage>),
    /// Answer when everything before has been handed to the socket.
    Flush(std::sync::mpsc::Sender<()>),
}

/// Messages for one socket, sent by a task of its own in the order they were given, from
/// any thread.
#[derive(Clone)]
pub struct Outbox {
    tx: UnboundedSender<Outgoing>,
}

impl Outbox {
    /// Starts the task that sends on `socket` (`channel` names it in the log).
    pub fn start<S>(mut socket: Connection<S>, channel: &'static str) -> Outbox
    where
        S: zeromq::SocketSend + Send + 'static,
    {
        let (tx, mut rx) = unbounded_channel::<Outgoing>();
        tokio::spawn(async move {
            while let Some(next) = rx.recv().await {
                match next {
                    Outgoing::Send(message) => {
                        let kind = message.header.msg_type.clone();
                        if let Err(e) = socket.send(*message).await {
                            log(&format!("cannot send a {kind} on {channel}: {e}"));
                        }
                    }
                    Outgoing::Flush(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        Outbox { tx }
    }

    /// Sends `message` as it is (a reply made with `as_child_of` its request).
    pub fn send(&self, message: JupyterMessage) {
        // Sending fails only once the task is gone, as the kernel ends.
        let _ = self.tx.send(Outgoing::Send(Box::new(message)));
    }

    /// Publishes `content` on iopub as the child of `parent` (the request it is about).
    pub fn publish(&self, content: impl Into<JupyterMessageContent>, parent: &JupyterMessage) {
        let mut message = JupyterMessage::new(content, Some(parent));
        // On iopub the first frame is a topic for subscribers to filter on, not the
        // requester's identity (which `new` copies from the parent).
        message.zmq_identities = vec![Bytes::from(format!("kernel.{}", message.header.msg_type))];
        self.send(message);
    }

    /// Waits (at most `timeout`) until every message given before has been handed to the
    /// socket: before the kernel ends, so that its last replies go out.
    pub fn flush(&self, timeout: Duration) {
        let (done, flushed) = std::sync::mpsc::channel();
        if self.tx.send(Outgoing::Flush(done)).is_ok() {
            let _ = flushed.recv_timeout(timeout);
        }
    }

    /// An outbox whose messages the returned receiver gets (for tests of what is sent).
    #[cfg(test)]
    pub fn for_test() -> (Outbox, tokio::sync::mpsc::UnboundedReceiver<JupyterMessage>) {
        let (tx, mut rx) = unbounded_channel::<Outgoing>();
        let (messages, received) = unbounded_channel();
        std::thread::spawn(move || {
            while let Some(next) = rx.blocking_recv() {
                match next {
                    Outgoing::Send(m) => {
                        let _ = messages.send(*m);
                    }
                    Outgoing::Flush(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        (Outbox { tx }, received)
    }
}

/// Answers heartbeats until the socket closes.
pub fn start_heartbeat(mut heartbeat: KernelHeartbeatConnection) {
    tokio::spawn(async move {
        loop {
            match heartbeat.single_heartbeat().await {
                Ok(()) => {}
                Err(e @ RuntimeError::ZmqError(_)) => {
                    log(&format!("the heartbeat stops: {e}"));
                    break;
                }
                Err(e) => log(&format!("heartbeat: {e}")),
            }
        }
    });
}

/// A note for whoever reads the kernel's log (Jupyter shows its standard error in the
/// server's log).
pub fn log(message: &str) {
    eprintln!("acc kernel: {message}");
}
