//! [`Scoped`]: SHMEM operations made by one thread, a warp or a block, on a context.
//!
//! At warp or block scope every thread of the group makes the call with the same arguments;
//! the last to arrive does the operation once for all (`group.rs`), and every thread returns
//! when it is done, as NVSHMEM's `_warp` and `_block` calls return after the group's
//! `__syncwarp` or `__syncthreads`.

use std::fmt;
use std::rc::Rc;

use hw::{Backend, Cmp, Copier, Queue, SignalOp};

use crate::TRACING_TARGET;
use crate::ctx::{Ctx, CtxOptions};
use crate::error::ShmemError;
use crate::kernel::error::KernelError;
use crate::kernel::group::{Arrival, Call, Group, Mismatch, Scope, Shared};
use crate::kernel::launch::Launch;
use crate::kernel::what::What;
use crate::memory::sym::{AtomicElement, Element, Sym, as_bytes};
use crate::p2p::wait::word_spec;
use crate::pe::{same_len, word_access};

/// The SHMEM operations of one thread, its warp or its block, on one context. Got from a
/// [`crate::KernelThread`]: the thread itself (it dereferences to its thread scope),
/// [`crate::KernelThread::warp`] or [`crate::KernelThread::block`]; [`Scoped::with_ctx`]
/// picks another context.
///
/// Every operation is `async`: it may suspend the thread (a wait, a get, or waiting for the
/// rest of the group), letting the launch's other threads run.
///
/// # Group errors
/// At warp and block scope, every operation can also fail with
/// [`KernelError::CallMismatch`] when the group's threads make different calls or pass
/// different arguments, and with [`KernelError::GroupCallFailed`] in the threads that waited
/// when the operation failed in the thread that made it for the group (that thread gets the
/// error itself). A thread that never makes the call fails the launch with
/// [`KernelError::NeverArrived`].
pub struct Scoped<'k, B: Backend> {
    launch: &'k Launch<'k, B>,
    thread: usize,
    scope: Scope,
    ctx: &'k Ctx<B>,
}

impl<B: Backend> Clone for Scoped<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for Scoped<'_, B> {}

impl<B: Backend> fmt::Debug for Scoped<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scoped")
            .field("scope", &self.scope)
            .field("group", &self.launch.group_name(self.thread, self.scope))
            .field("ctx", &self.ctx)
            .finish()
    }
}

/// Whose turn it is after a thread arrives at a scoped call.
enum Turn<'g, B: Backend> {
    /// This thread does the operation, then releases its group (none at thread scope).
    Perform(Option<&'g Group<B>>),
    /// Another thread will: wait for the group's release of `generation`.
    Wait(&'g Group<B>, u64),
}

impl<'k, B: Backend> Scoped<'k, B> {
    /// The thread scope of `thread`, on the default context.
    pub(crate) fn new(launch: &'k Launch<'k, B>, thread: usize) -> Scoped<'k, B> {
        Scoped {
            launch,
            thread,
            scope: Scope::Thread,
            ctx: &launch.shmem.ctx,
        }
    }

    /// The same thread and context at `scope`.
    pub(crate) fn at(&self, scope: Scope) -> Scoped<'k, B> {
        Scoped { scope, ..*self }
    }

    pub(crate) fn launch(&self) -> &'k Launch<'k, B> {
        self.launch
    }

    /// The calling thread's index in the launch.
    pub(crate) fn index(&self) -> usize {
        self.thread
    }

    /// The same operations on `ctx` (a context created on the host, or by a group with
    /// [`Scoped::ctx_create`]): its queue carries them, and fence and quiet are its own.
    pub fn with_ctx<'c>(&self, ctx: &'c Ctx<B>) -> Scoped<'c, B>
    where
        'k: 'c,
    {
        Scoped {
            launch: self.launch,
            thread: self.thread,
            scope: self.scope,
            ctx,
        }
    }

    /// The context these operations are made on.
    pub fn ctx(&self) -> &'k Ctx<B> {
        self.ctx
    }

    /// Copies `src` into `dst` on PE `pe` (`put`, `put_warp`, `put_block`): one transfer,
    /// whatever the scope.
    ///
    /// # Ordering
    /// As [`Ctx::put`].
    ///
    /// # Errors
    /// As [`Ctx::put`]; the group errors of [`Scoped`].
    pub async fn put<T: Element>(&self, dst: Sym<T>, src: &[T], pe: u32) -> Result<(), ShmemError> {
        self.put_as("put", dst, src, pe).await
    }

    /// [`Scoped::put`] without waiting for delivery (`put_nbi`, `put_nbi_warp`,
    /// `put_nbi_block`): complete after the next quiet.
    ///
    /// # Errors
    /// As [`Scoped::put`].
    pub async fn put_nbi<T: Element>(
        &self,
        dst: Sym<T>,
        src: &[T],
        pe: u32,
    ) -> Result<(), ShmemError> {
        self.put_as("put_nbi", dst, src, pe).await
    }

    /// A put, named `name` for the group to compare.
    async fn put_as<T: Element>(
        &self,
        name: &'static str,
        dst: Sym<T>,
        src: &[T],
        pe: u32,
    ) -> Result<(), ShmemError> {
        let what = What::Put {
            op: name,
            dst: dst.into(),
            pe,
        };
        let call = self.call(what, as_bytes(src));
        let copier = self.copier();
        self.meet_then(call, |ctx| ctx.put_by(dst, src, pe, copier))
            .await
    }

    /// Reads `src` from PE `pe` into this PE's part of `dst` (`get`, `get_warp`,
    /// `get_block`), and returns once it is there. The group waits; other threads run.
    ///
    /// # Ordering
    /// As [`Ctx::get`].
    ///
    /// # Errors
    /// As [`Ctx::get_nbi`]; [`ShmemError::Queue`] if the data does not arrive within
    /// `RSHMEM_WAIT_TIMEOUT_MS`; the group errors of [`Scoped`].
    pub async fn get<T: Element>(
        &self,
        dst: Sym<T>,
        src: Sym<T>,
        pe: u32,
    ) -> Result<(), ShmemError> {
        let what = What::Get {
            dst: Some(dst.into()),
            src: src.into(),
            pe,
        };
        let call = self.call(what, &[]);
        self.meet(call, async || {
            same_len(src.len(), dst.len())?;
            let source = self.ctx.read_range(src.access(), pe)?;
            let target = self.ctx.local_range(dst.access())?;
            tracing::trace!(target: TRACING_TARGET, pe = self.ctx.my_pe, peer = pe, op = "get (kernel)", bytes = source.len);
            let ticket = self.ctx.queue.get_into(source, target)?;
            self.launch.ticket(self.thread, &self.ctx.queue, ticket).await?;
            Ok(Shared::Nothing)
        })
        .await
        .map(drop)
    }

    /// Reads `src` from PE `pe` and hands the data to `sink` (`get` into memory that is not
    /// symmetric, such as a CUDA program's `cudaMalloc` buffer or a thread's own array). At
    /// warp or block scope only the thread that performs the get for the group calls its
    /// `sink`: the group's threads pass the same destination.
    ///
    /// # Ordering
    /// As [`Ctx::get`].
    ///
    /// # Errors
    /// As [`Scoped::get`].
    pub async fn get_with<T: Element>(
        &self,
        src: Sym<T>,
        pe: u32,
        sink: impl FnOnce(&[u8]),
    ) -> Result<(), ShmemError> {
        let what = What::Get {
            dst: None,
            src: src.into(),
            pe,
        };
        let call = self.call(what, &[]);
        self.meet(call, async || {
            let source = self.ctx.read_range(src.access(), pe)?;
            tracing::trace!(target: TRACING_TARGET, pe = self.ctx.my_pe, peer = pe, op = "get (kernel)", bytes = source.len);
            let ticket = self.ctx.queue.get(source)?;
            self.launch.ticket(self.thread, &self.ctx.queue, ticket).await?;
            sink(&self.ctx.queue.take_fetched(ticket));
            Ok(Shared::Nothing)
        })
        .await
        .map(drop)
    }

    /// Copies `src` into `dst` on PE `pe`, then updates `sig` there with `op` and `value`
    /// (`put_signal`, `put_signal_warp`, `put_signal_block`).
    ///
    /// # Ordering
    /// As [`Ctx::put_signal`].
    ///
    /// # Errors
    /// As [`Ctx::put_signal`]; the group errors of [`Scoped`].
    pub async fn put_signal<T: Element>(
        &self,
        dst: Sym<T>,
        src: &[T],
        sig: Sym<u64>,
        value: u64,
        op: SignalOp,
        pe: u32,
    ) -> Result<(), ShmemError> {
        self.put_signal_as("put_signal", dst, src, sig, value, op, pe)
            .await
    }

    /// [`Scoped::put_signal`] without waiting for delivery (`put_signal_nbi`, ...).
    ///
    /// # Errors
    /// As [`Scoped::put_signal`].
    pub async fn put_signal_nbi<T: Element>(
        &self,
        dst: Sym<T>,
        src: &[T],
        sig: Sym<u64>,
        value: u64,
        op: SignalOp,
        pe: u32,
    ) -> Result<(), ShmemError> {
        self.put_signal_as("put_signal_nbi", dst, src, sig, value, op, pe)
            .await
    }

    /// A put-with-signal, named `name` for the group to compare.
    #[allow(clippy::too_many_arguments)] // put_signal's arguments, and the call's name
    async fn put_signal_as<T: Element>(
        &self,
        name: &'static str,
        dst: Sym<T>,
        src: &[T],
        sig: Sym<u64>,
        value: u64,
        op: SignalOp,
        pe: u32,
    ) -> Result<(), ShmemError> {
        let what = What::PutSignal {
            op: name,
            dst: dst.into(),
            sig: sig.into(),
            signal: op,
            value,
            pe,
        };
        let call = self.call(what, as_bytes(src));
        let copier = self.copier();
        self.meet_then(call, |ctx| {
            ctx.put_signal_by(dst, src, sig, value, op, pe, copier)
        })
        .await
    }

    /// Orders the context's puts, atomics and signals to each PE ([`Ctx::fence`]). The
    /// context's queue is shared by every thread that uses it, so this orders all of them.
    ///
    /// # Errors
    /// As [`Ctx::fence`]; the group errors of [`Scoped`].
    pub async fn fence(&self) -> Result<(), ShmemError> {
        let call = self.call(What::Named("fence"), &[]);
        self.meet_then(call, |ctx| ctx.fence()).await
    }

    /// Completes the context's operations ([`Ctx::quiet`]): every thread's, since they share
    /// the context's queue. The PE stalls until they complete (docs/kernels.md).
    ///
    /// # Errors
    /// As [`Ctx::quiet`]; the group errors of [`Scoped`].
    pub async fn quiet(&self) -> Result<(), ShmemError> {
        let call = self.call(What::Named("quiet"), &[]);
        self.meet_then(call, |ctx| ctx.quiet()).await
    }

    /// Waits until this PE's `ivar` satisfies `ivar cmp value`, and returns the value that
    /// did. Other threads run meanwhile.
    ///
    /// # Ordering
    /// As [`Ctx::wait_until`].
    ///
    /// # Errors
    /// As [`Ctx::wait_until`]; the group errors of [`Scoped`].
    pub async fn wait_until<T: AtomicElement>(
        &self,
        ivar: Sym<T>,
        cmp: Cmp,
        value: T,
    ) -> Result<T, ShmemError> {
        let what = What::Wait {
            op: "wait_until",
            word: ivar.into(),
            cmp,
            value: value.to_bits(),
        };
        let bits = self
            .wait_word(what, ivar, cmp, value, "wait_until in a kernel")
            .await?;
        Ok(T::from_bits(bits))
    }

    /// Waits until this PE's signal word `sig` satisfies `sig cmp value`, and returns the
    /// value that did.
    ///
    /// # Ordering
    /// As [`Ctx::signal_wait_until`].
    ///
    /// # Errors
    /// As [`Scoped::wait_until`].
    pub async fn signal_wait_until(
        &self,
        sig: Sym<u64>,
        cmp: Cmp,
        value: u64,
    ) -> Result<u64, ShmemError> {
        let what = What::Wait {
            op: "signal_wait_until",
            word: sig.into(),
            cmp,
            value,
        };
        self.wait_word(what, sig, cmp, value, "signal_wait_until in a kernel")
            .await
    }

    /// Creates a context on the world team for the group (`ctx_create` from a thread, or a
    /// block context when called by every thread of a block): one new queue, through
    /// [`crate::Shmem::ctx_create`], and the same handle for every thread.
    ///
    /// # Errors
    /// As [`crate::Shmem::ctx_create`]; the group errors of [`Scoped`] (every thread must call
    /// it, with the same options).
    pub async fn ctx_create(&self, options: CtxOptions) -> Result<Rc<Ctx<B>>, ShmemError> {
        let call = self.call(What::Described(format!("ctx_create({options:?})")), &[]);
        let shmem = self.launch.shmem;
        let shared = self
            .meet(call, async || {
                Ok(Shared::Ctx(Rc::new(shmem.ctx_create(options)?)))
            })
            .await?;
        match shared {
            Shared::Ctx(ctx) => Ok(ctx),
            _ => unreachable!("ctx_create shares a context"),
        }
    }

    /// Destroys a context the group created (`ctx_destroy`), after completing its
    /// operations. Every thread of the group passes its handle, and keeps no clone.
    ///
    /// # Errors
    /// [`KernelError::ContextInUse`] if a clone of the handle is still held; as
    /// [`crate::Shmem::ctx_destroy`]; the group errors of [`Scoped`].
    pub async fn ctx_destroy(&self, ctx: Rc<Ctx<B>>) -> Result<(), ShmemError> {
        let call = Call {
            what: What::Named("ctx_destroy"),
            ctx: Rc::as_ptr(&ctx) as usize,
            data: &[],
        };
        match self.arrive(&call)? {
            Turn::Wait(group, generation) => {
                // Why drop first: the thread that destroys it must hold the only handle.
                drop(ctx);
                self.released(&call, group, generation).await.map(drop)
            }
            Turn::Perform(group) => {
                let destroyed = match Rc::try_unwrap(ctx) {
                    Ok(ctx) => self.launch.shmem.ctx_destroy(ctx),
                    Err(ctx) => Err(KernelError::ContextInUse {
                        holders: Rc::strong_count(&ctx) - 1,
                    }
                    .into()),
                };
                self.finish(&call, group, destroyed.map(|()| Shared::Nothing))
                    .map(drop)
            }
        }
    }

    /// Meets the group with `call`; the last thread to arrive runs `perform` and shares its
    /// result with the others.
    pub(crate) async fn meet<F>(&self, call: Call<'_>, perform: F) -> Result<Shared<B>, ShmemError>
    where
        F: AsyncFnOnce() -> Result<Shared<B>, ShmemError>,
    {
        match self.arrive(&call)? {
            Turn::Wait(group, generation) => self.released(&call, group, generation).await,
            Turn::Perform(group) => {
                let performed = perform().await;
                self.finish(&call, group, performed)
            }
        }
    }

    /// Meets the group with `call`; the last thread to arrive runs `op` on the context, a
    /// call that returns nothing, and every thread gets its outcome.
    async fn meet_then(
        &self,
        call: Call<'_>,
        op: impl FnOnce(&Ctx<B>) -> Result<(), ShmemError>,
    ) -> Result<(), ShmemError> {
        self.meet(call, async || op(self.ctx).map(|()| Shared::Nothing))
            .await
            .map(drop)
    }

    /// Meets the group with a call that does nothing but synchronise.
    pub(crate) async fn meet_only(&self, what: &'static str) -> Result<(), ShmemError> {
        self.meet_then(self.call(What::Named(what), &[]), |_| Ok(()))
            .await
    }

    /// Who copies this scope's puts: the thread, or its warp or block, by index in the
    /// launch.
    fn copier(&self) -> Copier {
        let index = |i: usize| u32::try_from(i).expect("a launch has at most 2^20 threads");
        let group = || {
            let (_, group) = self
                .launch
                .group(self.thread, self.scope)
                .expect("a warp or block scope has a group");
            index(group)
        };
        match self.scope {
            Scope::Thread => Copier::Thread(index(self.thread)),
            Scope::Warp => Copier::Warp(group()),
            Scope::Block => Copier::Block(group()),
        }
    }

    /// The call `what` on this scope's context, sending `data`.
    pub(crate) fn call<'d>(&self, what: What, data: &'d [u8]) -> Call<'d> {
        Call {
            what,
            ctx: std::ptr::from_ref(self.ctx) as usize,
            data,
        }
    }

    /// Records this thread's arrival at `call` in its group.
    fn arrive(&self, call: &Call<'_>) -> Result<Turn<'k, B>, ShmemError> {
        let Some((group, _)) = self.launch.group(self.thread, self.scope) else {
            return Ok(Turn::Perform(None));
        };
        match group.arrive(self.thread, call) {
            Ok(Arrival::Last) => {
                // Everything the group did before the call is ordered before its performing.
                self.launch.note_meeting(&group.members);
                Ok(Turn::Perform(Some(group)))
            }
            Ok(Arrival::Wait { generation }) => Ok(Turn::Wait(group, generation)),
            Err(mismatch) => Err(self.mismatch(mismatch)),
        }
    }

    /// Ends the group's call with what `performed` gave, and lets the threads that waited in
    /// it run: with the value, or failing too if it failed.
    fn finish(
        &self,
        call: &Call<'_>,
        group: Option<&Group<B>>,
        performed: Result<Shared<B>, ShmemError>,
    ) -> Result<Shared<B>, ShmemError> {
        if let Some(group) = group {
            let shared = match &performed {
                Ok(shared) => shared.clone(),
                Err(err) => Shared::Failed {
                    performer: self.thread,
                    message: err.to_string(),
                },
            };
            self.launch.wake(group.release(shared));
            // And the call before everything the group does after it.
            self.launch.note_meeting(&group.members);
        }
        tracing::trace!(target: TRACING_TARGET, pe = self.ctx.my_pe, call = %call.what, ok = performed.is_ok(), "scoped call");
        performed
    }

    /// Waits until the thread that performs `call` for `group` has done it.
    async fn released(
        &self,
        call: &Call<'_>,
        group: &Group<B>,
        generation: u64,
    ) -> Result<Shared<B>, ShmemError> {
        match self.launch.released(self.thread, group, generation).await {
            Shared::Failed { performer, message } => Err(KernelError::GroupCallFailed {
                group: self.launch.group_name(self.thread, self.scope),
                call: call.what.to_string(),
                performer: self.launch.ids(performer).1,
                message,
            }
            .into()),
            shared => Ok(shared),
        }
    }

    fn mismatch(&self, mismatch: Mismatch) -> ShmemError {
        KernelError::CallMismatch {
            group: self.launch.group_name(self.thread, self.scope),
            scope: self.scope.name(),
            first_thread: self.launch.ids(mismatch.first_thread).1,
            first: mismatch.first,
            thread: self.launch.ids(self.thread).1,
            call: mismatch.call,
        }
        .into()
    }

    /// Waits for a word of this PE's memory; `what` describes the call for the group.
    async fn wait_word<T: AtomicElement>(
        &self,
        what: What,
        ivar: Sym<T>,
        cmp: Cmp,
        value: T,
        purpose: &'static str,
    ) -> Result<u64, ShmemError> {
        let call = self.call(what, &[]);
        let shared = self
            .meet(call, async || {
                let word = self.ctx.local_range(word_access(ivar)?)?;
                let spec = word_spec(word, cmp, value, purpose);
                Ok(Shared::Word(self.launch.memory(self.thread, spec).await?))
            })
            .await?;
        match shared {
            Shared::Word(bits) => Ok(bits),
            _ => unreachable!("a wait shares the word it saw"),
        }
    }

    /// The group's scope.
    pub(crate) fn scope(&self) -> Scope {
        self.scope
    }
}
