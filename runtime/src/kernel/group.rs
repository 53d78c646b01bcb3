//! Where the threads of a warp or block meet for a scoped call.
//!
//! Every thread of the group makes the same scoped call with the same arguments. The last one
//! to arrive performs the operation once, on behalf of all (a block-scoped put is one
//! transfer, as a block's cooperative copy is), and releases the others with its result. The
//! first arrival's call is kept so that each later one is compared with it: threads that
//! disagree are an error, not a silent choice of one thread's arguments.

use std::cell::{Cell, RefCell};
use std::ops::Range;
use std::rc::Rc;

use hw::Backend;

use crate::ctx::Ctx;

use super::what::What;

/// Which threads make a scoped call together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// The calling thread alone.
    Thread,
    /// The [`crate::kernel::WARP_SIZE`] threads of the caller's warp.
    Warp,
    /// Every thread of the caller's block.
    Block,
}

impl Scope {
    /// The scope's name in messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scope::Thread => "thread",
            Scope::Warp => "warp",
            Scope::Block => "block",
        }
    }
}

/// A scoped call as the threads of a group compare it.
#[derive(Debug)]
pub(crate) struct Call<'d> {
    /// The operation and its arguments, for comparison and for messages.
    pub(crate) what: What,
    /// The context it is made on, by address.
    pub(crate) ctx: usize,
    /// The data it sends, compared by content when threads pass different buffers.
    pub(crate) data: &'d [u8],
}

/// The first arrival's call, kept until the group is released.
#[derive(Debug)]
struct FirstCall {
    thread: usize,
    what: What,
    ctx: usize,
    data_at: usize,
    data: Vec<u8>,
}

/// What the thread that performed a group's call hands to the others.
pub(crate) enum Shared<B: Backend> {
    /// Nothing: the call only has effects.
    Nothing,
    /// A word, such as the value a wait returned.
    Word(u64),
    /// A context the group created.
    Ctx(Rc<Ctx<B>>),
    /// The operation failed in `performer`, with `message`: the others fail too.
    Failed {
        /// The thread that performed it.
        performer: usize,
        /// Its error.
        message: String,
    },
}

impl<B: Backend> Clone for Shared<B> {
    fn clone(&self) -> Self {
        match self {
            Shared::Nothing => Shared::Nothing,
            Shared::Word(word) => Shared::Word(*word),
            Shared::Ctx(ctx) => Shared::Ctx(Rc::clone(ctx)),
            Shared::Failed { performer, message } => Shared::Failed {
                performer: *performer,
                message: message.clone(),
            },
        }
    }
}

/// How a thread's arrival went.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// The thread is the last to arrive: it performs the call.
    Last,
    /// Others are still missing: the thread waits until `generation` has passed.
    Wait {
        /// The group's generation at the thread's arrival.
        generation: u64,
    },
}

/// How a thread's call differs from the first arrival's.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Mismatch {
    /// The thread that arrived first.
    pub(crate) first_thread: usize,
    /// Its call.
    pub(crate) first: String,
    /// The differing call, with what differs when the description alone does not show it.
    pub(crate) call: String,
}

/// The meeting point of one warp or block.
pub(crate) struct Group<B: Backend> {
    pub(crate) scope: Scope,
    /// The launch's indices of the group's threads.
    pub(crate) members: Range<usize>,
    arrived: Cell<u32>,
    generation: Cell<u64>,
    first: RefCell<Option<FirstCall>>,
    parked: RefCell<Vec<usize>>,
    /// What the last call produced, until each thread that waited in it has taken it (so a
    /// shared context is not held on to by the group).
    shared: RefCell<Shared<B>>,
    takers: Cell<usize>,
}

impl<B: Backend> Group<B> {
    pub(crate) fn new(scope: Scope, members: Range<usize>) -> Group<B> {
        Group {
            scope,
            members,
            arrived: Cell::new(0),
            generation: Cell::new(0),
            first: RefCell::new(None),
            parked: RefCell::new(Vec::new()),
            shared: RefCell::new(Shared::Nothing),
            takers: Cell::new(0),
        }
    }

    /// The number of threads in the group.
    pub(crate) fn size(&self) -> u32 {
        self.members.len() as u32
    }

    /// Records that `thread` arrived with `call`.
    pub(crate) fn arrive(&self, thread: usize, call: &Call<'_>) -> Result<Arrival, Mismatch> {
        let mut first = self.first.borrow_mut();
        match first.as_ref() {
            None => {
                *first = Some(FirstCall {
                    thread,
                    what: call.what.clone(),
                    ctx: call.ctx,
                    data_at: call.data.as_ptr() as usize,
                    // Why not for a group of one: nothing is compared with it, and a block of
                    // one thread putting 64 MiB copied it only to drop it.
                    data: if self.size() == 1 {
                        Vec::new()
                    } else {
                        call.data.to_vec()
                    },
                });
            }
            Some(f) => {
                let differs = if f.what != call.what {
                    Some("")
                } else if f.ctx != call.ctx {
                    Some(" on another context")
                } else if (f.data_at, f.data.len())
                    != (call.data.as_ptr() as usize, call.data.len())
                    && f.data != call.data
                {
                    Some(" with other data")
                } else {
                    None
                };
                if let Some(how) = differs {
                    return Err(Mismatch {
                        first_thread: f.thread,
                        first: f.what.to_string(),
                        call: format!("{}{how}", call.what),
                    });
                }
            }
        }
        let arrived = self.arrived.get() + 1;
        self.arrived.set(arrived);
        if arrived == self.size() {
            Ok(Arrival::Last)
        } else {
            self.parked.borrow_mut().push(thread);
            Ok(Arrival::Wait {
                generation: self.generation.get(),
            })
        }
    }

    /// Ends the current call with `shared` and returns the threads that waited in it.
    pub(crate) fn release(&self, shared: Shared<B>) -> Vec<usize> {
        let parked = std::mem::take(&mut *self.parked.borrow_mut());
        // Why not kept when nobody waited: nobody would take it, and a context would stay held.
        *self.shared.borrow_mut() = if parked.is_empty() {
            Shared::Nothing
        } else {
            shared
        };
        self.takers.set(parked.len());
        self.generation.set(self.generation.get() + 1);
        self.arrived.set(0);
        *self.first.borrow_mut() = None;
        parked
    }

    /// What the call that a thread arrived at in `generation` produced, once it is over. Each
    /// thread that waited takes it once.
    pub(crate) fn released_since(&self, generation: u64) -> Option<Shared<B>> {
        if self.generation.get() == generation {
            return None;
        }
        // Why no generation check here: a group's next call cannot end before every thread
        // released from this one has arrived at it, so the slot still holds this call's result.
        let takers = self.takers.get() - 1;
        self.takers.set(takers);
        Some(if takers == 0 {
            std::mem::replace(&mut *self.shared.borrow_mut(), Shared::Nothing)
        } else {
            self.shared.borrow().clone()
        })
    }

    /// The call threads wait at and how many have arrived, if any have.
    pub(crate) fn pending(&self) -> Option<(String, u32)> {
        let first = self.first.borrow();
        first
            .as_ref()
            .map(|f| (f.what.to_string(), self.arrived.get()))
    }

    /// Whether `thread` waits in this group's current call.
    pub(crate) fn has_parked(&self, thread: usize) -> bool {
        self.parked.borrow().contains(&thread)
    }
}

#[cfg(test)]
mod tests {
    use sim::SimBackend;

    use super::{Arrival, Call, Group, Mismatch, Scope, Shared, What};

    fn call<'d>(what: &'static str, data: &'d [u8]) -> Call<'d> {
        Call {
            what: What::Named(what),
            ctx: 0,
            data,
        }
    }

    #[test]
    fn the_last_arrival_performs_and_releases_the_others() {
        let group = Group::<SimBackend>::new(Scope::Warp, 10..13);
        assert_eq!(
            group.arrive(10, &call("sync", &[])),
            Ok(Arrival::Wait { generation: 0 })
        );
        assert_eq!(
            group.arrive(12, &call("sync", &[])),
            Ok(Arrival::Wait { generation: 0 })
        );
        assert!(group.released_since(0).is_none());
        assert_eq!(group.pending(), Some(("sync".to_string(), 2)));
        assert_eq!(group.arrive(11, &call("sync", &[])), Ok(Arrival::Last));
        assert_eq!(group.release(Shared::Word(7)), vec![10, 12]);
        assert!(matches!(group.released_since(0), Some(Shared::Word(7))));
        assert_eq!(group.pending(), None);
    }

    #[test]
    fn calls_that_differ_are_refused() {
        let group = Group::<SimBackend>::new(Scope::Block, 0..4);
        let data = [1u8, 2, 3];
        let same_bytes = data.to_vec();
        group.arrive(0, &call("put", &data)).unwrap();
        // Another buffer with the same bytes is the same call.
        group.arrive(1, &call("put", &same_bytes)).unwrap();
        assert_eq!(
            group.arrive(2, &call("put", &[9, 9, 9])),
            Err(Mismatch {
                first_thread: 0,
                first: "put".into(),
                call: "put with other data".into(),
            })
        );
        assert_eq!(
            group.arrive(3, &call("sync", &[])).unwrap_err().call,
            "sync"
        );
    }
}
