//! The kernel: a [`Session`] that runs notebook cells, behind the Jupyter channels.
//!
//! Threads: the cells run on the thread that called [`run`] (the `acc` thread, whose large
//! stack compiled code needs), one request of the shell channel at a time, in order, as
//! Jupyter expects (a completion asked for after a cell sees what the cell declared). The
//! sockets are served by tokio tasks: the shell task hands requests over; the control task
//! answers `interrupt_request` and `shutdown_request` itself, so that they act while a cell
//! runs; the heartbeat answers regardless. An interrupt, from the control channel or SIGINT
//! (Jupyter's default `interrupt_mode`), stops the running cell through the engine's
//! `InterruptHandle`, as Ctrl-C does in the terminal, and the session goes on.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use jupyter_protocol::{
    CommInfoReply, DisplayData, ErrorOutput, ExecuteInput, ExecuteReply, ExecuteRequest,
    ExecuteResult, ExecutionCount, HistoryReply, InterruptReply, JupyterMessage,
    JupyterMessageContent, Media, MediaType, Payload, ReplyStatus, ShutdownReply, Status,
};

use acc_repl::session::{self, Outcome, Reply, Session};

use super::answers;
use super::output::CellOutput;
use super::wire::{self, log, Outbox, ReadError};

/// Runs the kernel on the connection file `path` until it is shut down: the exit status.
pub fn run(path: &Path, devices: &crate::DeviceArgs) -> i32 {
    match serve(path, devices) {
        Ok(()) => 0,
        Err(e) => {
            log(&e);
            1
        }
    }
}

fn serve(path: &Path, devices: &crate::DeviceArgs) -> Result<(), String> {
    let info = wire::read_connection_file(path)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("acc-kernel-io")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the kernel's I/O threads: {e}"))?;
    let session_id = uuid::Uuid::new_v4().to_string();
    let sockets = runtime.block_on(wire::bind(&info, &session_id))?;
    // Tasks are spawned from this thread from here on.
    let _runtime = runtime.enter();

    let iopub = Outbox::start(sockets.iopub, "iopub");
    let shell_out = Outbox::start(sockets.shell_out, "shell");
    let control_out = Outbox::start(sockets.control_out, "control");
    wire::start_heartbeat(sockets.heartbeat);
    // Kept open for the kernel's life: clients connect to it, and the kernel never reads it.
    let _stdin = sockets.stdin;

    let running = Running::default();
    let interrupts = running.clone();
    if let Err(e) = ctrlc::set_handler(move || interrupts.interrupt()) {
        log(&format!("SIGINT will not interrupt cells: {e}"));
    }

    let (jobs, next_job) = std::sync::mpsc::channel();
    let stopping = Arc::new(AtomicBool::new(false));
    tokio::spawn(read_shell(sockets.shell_in, jobs.clone()));
    tokio::spawn(serve_control(
        sockets.control_in,
        control_out.clone(),
        iopub.clone(),
        running.clone(),
        jobs,
        stopping.clone(),
    ));

    let output = CellOutput::new(iopub.clone());
    output.publish_while_running();
    let mut kernel = Kernel {
        session: new_session(devices, &output)?,
        output,
        iopub: iopub.clone(),
        shell: shell_out.clone(),
        running,
        execution_count: 0,
        stopping,
    };
    kernel.serve(&next_job);
    drop(kernel);

    // The last replies (the shutdown's) go out before the process ends.
    for outbox in [&shell_out, &control_out, &iopub] {
        outbox.flush(Duration::from_secs(2));
    }
    std::thread::sleep(Duration::from_millis(100));
    Ok(())
}

/// A session whose engines (the first, and each `:reset` makes) print into `output`.
fn new_session(devices: &crate::DeviceArgs, output: &CellOutput) -> Result<Session, String> {
    let args = crate::RunArgs {
        devices: devices.clone(),
        ..crate::RunArgs::default()
    };
    let output = output.clone();
    let new_engine = move || -> Result<acc::Engine, acc::Error> {
        let (mut engine, _) = crate::engine(&args).map_err(|_| {
            acc::Error::Usage("cannot start a new session (the kernel's log says why)".into())
        })?;
        engine.set_output(output.writer());
        // Pictures (`imshow`, `plot` without a file name) show inline as `image/png`.
        let pictures = output.clone();
        engine.set_display(move |p| pictures.picture(&p.png, p.width, p.height));
        Ok(engine)
    };
    let engine = new_engine().map_err(|e| e.to_string())?;
    Ok(Session::new(engine, Box::new(new_engine)))
}

/// What the shell task hands the cells' thread.
enum Job {
    Shell(Box<JupyterMessage>),
    /// `shutdown_request` came on the control channel.
    Stop,
}

/// The run an interrupt stops: the running cell's, while one runs.
#[derive(Clone, Default)]
struct Running(Arc<Mutex<Option<acc::InterruptHandle>>>);

impl Running {
    fn lock(&self) -> MutexGuard<'_, Option<acc::InterruptHandle>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops the running cell; between cells it does nothing (the engine would otherwise stop
    /// the next run).
    fn interrupt(&self) {
        if let Some(handle) = self.lock().as_ref() {
            handle.interrupt();
        }
    }
}

/// Hands every shell request to the cells' thread, in order.
async fn read_shell(mut shell: jupyter_zmq_client::RouterRecvConnection, jobs: Sender<Job>) {
    loop {
        match wire::read(&mut shell).await {
            Ok(request) => {
                if jobs.send(Job::Shell(Box::new(request))).is_err() {
                    return;
                }
            }
            Err(ReadError::Bad(why)) => log(&format!("a shell message was skipped: {why}")),
            Err(ReadError::Closed(why)) => {
                log(&format!("the shell socket closed: {why}"));
                return;
            }
        }
    }
}

/// Answers the control channel: interrupts and shutdown act at once, whatever the cells'
/// thread is doing.
async fn serve_control(
    mut control: jupyter_zmq_client::RouterRecvConnection,
    replies: Outbox,
    iopub: Outbox,
    running: Running,
    jobs: Sender<Job>,
    stopping: Arc<AtomicBool>,
) {
    loop {
        let request = match wire::read(&mut control).await {
            Ok(request) => request,
            Err(ReadError::Bad(why)) => {
                log(&format!("a control message was skipped: {why}"));
                continue;
            }
            Err(ReadError::Closed(why)) => {
                log(&format!("the control socket closed: {why}"));
                return;
            }
        };
        let reply: JupyterMessageContent = match &request.content {
            JupyterMessageContent::InterruptRequest(_) => {
                running.interrupt();
                InterruptReply::new().into()
            }
            JupyterMessageContent::ShutdownRequest(r) => {
                stopping.store(true, Ordering::SeqCst);
                running.interrupt();
                let _ = jobs.send(Job::Stop);
                ShutdownReply {
                    restart: r.restart,
                    status: ReplyStatus::Ok,
                    error: None,
                }
                .into()
            }
            JupyterMessageContent::KernelInfoRequest(_) => {
                iopub.publish(Status::busy(), &request);
                iopub.publish(Status::idle(), &request);
                answers::kernel_info().into()
            }
            other => {
                log(&format!(
                    "a `{}` on the control channel is not answered",
                    other.message_type()
                ));
                continue;
            }
        };
        replies.send(JupyterMessage::new(reply, Some(&request)));
    }
}

/// What the kernel does after a request.
#[derive(PartialEq, Eq)]
enum Next {
    Serve,
    /// A cell failed with `stop_on_error`: the cells already waiting are not run.
    AbortQueued,
    /// `:quit`, `exit(code)` or `shutdown_request`: the kernel ends.
    End,
}

struct Kernel {
    session: Session,
    output: CellOutput,
    iopub: Outbox,
    shell: Outbox,
    running: Running,
    /// The `In [n]` of the last cell run with `store_history`.
    execution_count: usize,
    /// A shutdown was asked for: requests still waiting are dropped.
    stopping: Arc<AtomicBool>,
}

impl Kernel {
    /// Serves shell requests until the kernel ends.
    fn serve(&mut self, jobs: &Receiver<Job>) {
        while let Ok(job) = jobs.recv() {
            let Job::Shell(request) = job else { return };
            if self.stopping.load(Ordering::SeqCst) {
                return;
            }
            if self.answer(&request, jobs) == Next::End {
                return;
            }
        }
    }

    /// After a failed cell: answers the execute requests already waiting with `aborted`, as
    /// IPython does, so that "run all" stops at the first error; other requests are served.
    /// This happens before the failed cell's `idle`: a client that waits for it before its
    /// next request (as `jupyter_client` does) never has that request aborted.
    fn abort_queued(&mut self, jobs: &Receiver<Job>) -> Next {
        while let Ok(job) = jobs.try_recv() {
            let Job::Shell(request) = job else {
                return Next::End;
            };
            if let JupyterMessageContent::ExecuteRequest(_) = request.content {
                self.iopub.publish(Status::busy(), &request);
                let reply = ExecuteReply {
                    status: ReplyStatus::Aborted,
                    execution_count: ExecutionCount::new(self.execution_count),
                    ..ExecuteReply::default()
                };
                self.reply(reply, &request);
                self.iopub.publish(Status::idle(), &request);
            } else if self.answer(&request, jobs) == Next::End {
                return Next::End;
            }
        }
        Next::Serve
    }

    /// Answers one shell request, with the kernel's status busy around it.
    fn answer(&mut self, request: &JupyterMessage, jobs: &Receiver<Job>) -> Next {
        self.iopub.publish(Status::busy(), request);
        let mut next = Next::Serve;
        match &request.content {
            JupyterMessageContent::ExecuteRequest(r) => next = self.execute(request, r),
            JupyterMessageContent::KernelInfoRequest(_) => {
                self.reply(answers::kernel_info(), request)
            }
            JupyterMessageContent::CompleteRequest(r) => {
                let reply = answers::complete(&mut self.session, r);
                self.reply(reply, request)
            }
            JupyterMessageContent::InspectRequest(r) => {
                let reply = answers::inspect(&mut self.session, r);
                self.reply(reply, request)
            }
            JupyterMessageContent::IsCompleteRequest(r) => {
                self.reply(answers::is_complete(r), request);
            }
            JupyterMessageContent::CommInfoRequest(_) => {
                self.reply(CommInfoReply::default(), request)
            }
            JupyterMessageContent::HistoryRequest(_) => {
                self.reply(HistoryReply::new(Vec::new()), request)
            }
            // Clients of protocol versions before 5 send these on shell.
            JupyterMessageContent::ShutdownRequest(r) => {
                let reply = ShutdownReply {
                    restart: r.restart,
                    status: ReplyStatus::Ok,
                    error: None,
                };
                self.reply(reply, request);
                next = Next::End;
            }
            JupyterMessageContent::InterruptRequest(_) => {
                self.reply(InterruptReply::new(), request)
            }
            other => log(&format!(
                "a `{}` on the shell channel is not answered",
                other.message_type()
            )),
        }
        if next == Next::AbortQueued {
            next = self.abort_queued(jobs);
        }
        self.iopub.publish(Status::idle(), request);
        next
    }

    fn reply(&self, content: impl Into<JupyterMessageContent>, request: &JupyterMessage) {
        self.shell.send(JupyterMessage::new(content, Some(request)));
    }

    /// Runs a cell: its input, its output as `stream`, its last value as `execute_result`,
    /// a command's answer as text or a table, a failure as `error`.
    fn execute(&mut self, request: &JupyterMessage, r: &ExecuteRequest) -> Next {
        if !r.silent && r.store_history {
            self.execution_count += 1;
        }
        let count = ExecutionCount::new(self.execution_count);
        if !r.silent {
            let input = ExecuteInput {
                code: r.code.clone(),
                execution_count: count,
            };
            self.iopub.publish(input, request);
        }

        self.output.begin(request);
        *self.running.lock() = Some(self.session.interrupt_handle());
        let output = self.output.clone();
        // Messages name a cell by its `In [n]`.
        let name = format!("<cell:{}>", self.execution_count);
        let cell = self
            .session
            .eval_cell(&r.code, &name, &mut || output.keep_back());
        *self.running.lock() = None;
        let kept_back = self.output.end();

        match (cell.value_type, kept_back) {
            (Some(ty), Some(text)) => {
                let (printed, value) = session::split_value(&text, &ty);
                self.output.print(printed);
                if !r.silent {
                    let result = ExecuteResult::new(count, answers::plain(value));
                    self.iopub.publish(result, request);
                }
            }
            // The last statement failed after printing: what it printed is output.
            (None, Some(text)) => self.output.print(&text),
            (_, None) => {}
        }

        let mut reply = ExecuteReply {
            execution_count: count,
            ..ExecuteReply::default()
        };
        let mut next = Next::Serve;
        match cell.outcome {
            Outcome::Ran => {}
            Outcome::Reply(answer) => self.show(answer, request),
            Outcome::Failed(e) => {
                let error = answers::error_of(&e);
                self.iopub.publish(
                    ErrorOutput {
                        ename: error.ename.clone(),
                        evalue: error.evalue.clone(),
                        traceback: error.traceback.clone(),
                    },
                    request,
                );
                reply.status = ReplyStatus::Error;
                reply.error = Some(Box::new(error));
                if r.stop_on_error {
                    next = Next::AbortQueued;
                }
            }
            Outcome::End(status) => {
                let note = format!("the session ended (status {status}); the kernel stops\n");
                self.iopub
                    .publish(jupyter_protocol::StreamContent::stderr(&note), request);
                reply.payload.push(Payload::AskExit { keepkernel: false });
                next = Next::End;
            }
        }
        self.reply(reply, request);
        next
    }

    /// A command's answer: text as output; a table (`:vars`, `:time`, the profile) as an HTML
    /// table, with its text for front ends that show only text.
    fn show(&self, answer: Reply, request: &JupyterMessage) {
        match answer.table() {
            None => self.iopub.publish(
                jupyter_protocol::StreamContent::stdout(&answer.to_text()),
                request,
            ),
            Some(table) => {
                let data = Media::new(vec![
                    MediaType::Plain(answer.to_text()),
                    MediaType::Html(table.to_html()),
                ]);
                self.iopub.publish(DisplayData::new(data), request);
            }
        }
    }
}
