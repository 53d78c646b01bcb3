//! [`Shmem`]: one PE's handle to the runtime, its setup and teardown, and its contexts.
//!
//! `Shmem` dereferences to its default context ([`Ctx`]), whose methods are the operations
//! (`p2p/`); `Ctx` in turn dereferences to the [`PeState`] every context shares. What only
//! the PE as a whole does (memory management in `memory/alloc.rs`, barriers, teams in
//! `team/`, creating contexts) is here.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::ops::Deref;
use std::rc::Rc;
use std::sync::Arc;

use hw::{Backend, Device};

use crate::TRACING_TARGET;
use crate::config::{Config, ConfigError};
use crate::ctx::{Ctx, CtxOptions};
use crate::error::ShmemError;
use crate::exit::ExitFlag;
use crate::memory::allocator::MIN_ALIGN_BYTES;
use crate::memory::allocator::Span;
use crate::memory::heaps::{Heaps, share_segments};
use crate::memory::local::local_windows;
use crate::memory::sym::{Element, Sym};
use crate::p2p::lock::HeldLocks;
use crate::pe::{PeState, deadline, local};
use crate::team::{Predefined, SlotLayout, Team, TeamConfig};

/// One PE's handle to the runtime: the default context, the teams and the symmetric heaps.
/// [`crate::run()`] creates one per PE and hands it to the PE's program.
///
/// A `Shmem` belongs to its PE: it is neither `Send` nor `Sync`, and its operations take
/// `&self` because one PE's program is sequential.
pub struct Shmem<B: Backend> {
    /// The default context (Tier-0), on the world team.
    pub(crate) ctx: Ctx<B>,
    pub(crate) teams: Predefined,
    pub(crate) team_layout: SlotLayout,
    /// Team slots free on this PE, one bit each.
    pub(crate) team_slots_free: Cell<u64>,
}

impl<B: Backend> fmt::Debug for Shmem<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shmem")
            .field("my_pe", &self.my_pe)
            .field("n_pes", &self.n_pes)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl<B: Backend> Deref for Shmem<B> {
    type Target = Ctx<B>;

    fn deref(&self) -> &Ctx<B> {
        &self.ctx
    }
}

impl<B: Backend> Shmem<B> {
    /// Sets up this PE: creates a segment per heap, trades settings and segment keys with
    /// every PE, imports every segment (its own included, so a PE reaches itself like any
    /// peer), creates the default queue, reserves the teams' areas in the default heap, and
    /// synchronises with every PE.
    ///
    /// Collective: every PE of the run must call it.
    ///
    /// # Errors
    /// [`ShmemError::NoSuchHeap`] if the default heap has size 0;
    /// [`ShmemError::HeapSegment`] if the device refuses a heap's memory;
    /// [`ShmemError::HeapSettingsDiffer`] if the PEs' heap settings differ;
    /// [`ShmemError::Device`] if a peer's segment cannot be imported or no queue can be had;
    /// [`ShmemError::Queue`] if a peer never arrives; [`ShmemError::HeapExhausted`] if the
    /// default heap cannot even hold the teams' areas; [`ShmemError::Config`] if
    /// `RSHMEM_TEAMS_MAX` is out of range or a heap is larger than the address space allows.
    pub(crate) fn init(
        device: B::Device,
        config: Config,
        exit: Arc<ExitFlag>,
    ) -> Result<Shmem<B>, ShmemError> {
        let my_pe = device.pe().0;
        let n_pes = device.n_pes();
        if config.info && my_pe == 0 {
            config.log();
        }
        check_teams_max(config.teams_max)?;
        let mut heaps = Heaps::new(&config)?;
        tracing::debug!(
            target: TRACING_TARGET,
            pe = my_pe,
            n_pes,
            device_bytes = config.device_heap_bytes,
            host_bytes = config.host_heap_bytes,
            default_heap = ?config.default_heap,
            "init"
        );
        // Why first: as the first allocation of the default heap it lands at the same
        // address on every PE; and before the segments, so that they are backed that far.
        let areas = heaps.default_mut()?.alloc(
            u64::from(config.teams_max) * SlotLayout::slot_bytes(n_pes),
            MIN_ALIGN_BYTES,
            true,
        )?;
        share_segments(&device, &mut heaps, deadline(&device, &config))?;
        let queue = device.create_queue()?;
        let team_layout = SlotLayout {
            base: areas.offset,
            n_pes,
        };
        let team_config = TeamConfig {
            num_contexts: config.contexts_max,
        };
        let teams = Predefined::new(&device, team_layout, team_config);
        let names = Arc::new(hw::WordNames::new());
        for team in [&teams.world, &teams.shared, &teams.node] {
            crate::team::name_team_counters(&names, team);
        }
        device.set_word_names(Arc::clone(&names));
        let world = teams.world.clone();
        world.add_context()?;
        let local_windows = local_windows(&device, &heaps);
        let pe = Rc::new(PeState {
            local_windows,
            device,
            heaps: RefCell::new(heaps),
            config,
            my_pe,
            n_pes,
            exit,
            locks: HeldLocks::default(),
            names,
        });
        let free_slots = crate::team::free_slots_at_init(pe.config.teams_max);
        let shmem: Shmem<B> = Shmem {
            ctx: Ctx {
                pe,
                queue,
                options: CtxOptions::default(),
                team: world,
                pending_fetches: RefCell::default(),
                any_turn: Cell::default(),
            },
            teams,
            team_layout,
            team_slots_free: Cell::new(free_slots),
        };
        // Why a bootstrap barrier (an exchange of nothing) and not a barrier over the fabric:
        // what peers need before they reach this PE is set up once every PE got here (the
        // teams' areas zeroed, the segments imported), and nothing travelled over the fabric
        // yet to complete or show. NVSHMEM ends its start-up with bootstrap barriers too; one
        // over the fabric would cost `log2(n)` rounds of atomics on every PE of a big job.
        shmem.device.exchange(&[0u8; 0], shmem.deadline())?;
        Ok(shmem)
    }

    /// Names the object `sym` in this PE's reports of waits that never end ("the
    /// nvshmem_malloc'ed object #2 (4096 bytes)"): a word inside it is then reported as the
    /// name and its offset in the object. The name lasts until [`Shmem::forget_name`].
    pub fn name_object<T: Element>(&self, sym: Sym<T>, name: String) {
        let word = local(Span {
            offset: sym.addr().0,
            len_bytes: sym.len_bytes(),
        });
        self.pe.names.name(word.kind, word.offset, word.len, name);
    }

    /// The first word of `sym` as this PE's reports of waits name it
    /// ([`hw::WordNames::describe`]).
    pub fn describe_word<T: Element>(&self, sym: Sym<T>) -> String {
        let word = local(Span {
            offset: sym.addr().0,
            len_bytes: 0,
        });
        self.pe.names.describe(word.kind, word.offset)
    }

    /// Forgets the name of the object `sym` (before it is freed).
    pub fn forget_name<T: Element>(&self, sym: Sym<T>) {
        let word = local(Span {
            offset: sym.addr().0,
            len_bytes: 0,
        });
        self.pe.names.forget(word.kind, word.offset);
    }

    /// Tears this PE down: completes its operations and waits for every PE to get here, so
    /// no peer still targets this PE's memory when it goes away. [`crate::run()`] calls it
    /// after the PE's program; a program set up with [`crate::attach`] calls it itself.
    ///
    /// Then a quiet: the barrier's last arrivals are this PE's updates of peers' counters,
    /// which a backend may post without waiting for them (the network path does), and a
    /// process that exits right after must not take one along while a peer waits for it.
    ///
    /// # Errors
    /// As [`Shmem::barrier_all`].
    pub fn finalize(&self) -> Result<(), ShmemError> {
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, "finalize");
        self.barrier_all()?;
        self.quiet()
    }

    /// The team of every PE (`SHMEM_TEAM_WORLD`); its PE numbers are the run's.
    pub fn team_world(&self) -> &Team {
        &self.teams.world
    }

    /// The PEs whose symmetric memory this PE reaches with loads and stores, NVLink peers on
    /// its host (`SHMEM_TEAM_SHARED`).
    pub fn team_shared(&self) -> &Team {
        &self.teams.shared
    }

    /// The PEs on this PE's host (`SHMEMX_TEAM_NODE`).
    pub fn team_node(&self) -> &Team {
        &self.teams.node
    }

    /// Creates a context on the world team (`shmem_ctx_create`): a queue of its own, so its
    /// fence and quiet are independent of every other context's.
    ///
    /// # Errors
    /// [`ShmemError::ContextsExhausted`] when the world team has `RSHMEM_CONTEXTS_MAX`
    /// contexts (the default context included); [`ShmemError::Device`] if the backend has no
    /// queue left.
    pub fn ctx_create(&self, options: CtxOptions) -> Result<Ctx<B>, ShmemError> {
        self.team_create_ctx(self.team_world(), options)
    }

    /// Creates a context on `team` (`shmem_team_create_ctx`): its operations take `team`'s
    /// PE numbers.
    ///
    /// # Errors
    /// [`ShmemError::ContextsExhausted`] when `team` has [`TeamConfig::num_contexts`]
    /// contexts; [`ShmemError::TeamDestroyed`]; [`ShmemError::Device`] if the backend has no
    /// queue left.
    pub fn team_create_ctx(&self, team: &Team, options: CtxOptions) -> Result<Ctx<B>, ShmemError> {
        team.add_context()?;
        let queue = match self.device.create_queue() {
            Ok(queue) => queue,
            Err(source) => {
                team.remove_context();
                return Err(source.into());
            }
        };
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, ?options, team = ?team.kind(), "ctx_create");
        Ok(Ctx {
            pe: Rc::clone(&self.ctx.pe),
            queue,
            options,
            team: team.clone(),
            pending_fetches: RefCell::default(),
            any_turn: Cell::default(),
        })
    }

    /// Destroys `ctx` (`shmem_ctx_destroy`): completes its operations first, as OpenSHMEM
    /// asks.
    ///
    /// # Errors
    /// As [`Ctx::quiet`]; the context is gone either way.
    pub fn ctx_destroy(&self, ctx: Ctx<B>) -> Result<(), ShmemError> {
        let quiet = ctx.quiet();
        ctx.team.remove_context();
        tracing::debug!(target: TRACING_TARGET, pe = self.my_pe, "ctx_destroy");
        quiet
    }
}

/// Checks `RSHMEM_TEAMS_MAX`: the predefined teams need 3 slots, a slot mask has 64 bits.
fn check_teams_max(teams_max: u32) -> Result<(), ShmemError> {
    if (3..=64).contains(&teams_max) {
        Ok(())
    } else {
        Err(ConfigError::Invalid {
            name: "RSHMEM_TEAMS_MAX",
            value: teams_max.to_string(),
            expected: "an integer from 3 to 64",
            example: "16",
        }
        .into())
    }
}
