//! [`CudaQueue`] and the program's own streams: timing work on the queue's stream the way CUDA
//! programs do, and ordering the queue with a `cudaStream_t` of the program (the C API's
//! on-stream calls).

use std::ffi::c_void;

use cudarc::driver::sys;

use super::CudaQueue;
use crate::cuda::error::During;
use crate::error::QueueError;

impl CudaQueue {
    /// Runs `enqueue` (which issues work on this queue) between two timing events of the
    /// queue's stream, waits for the second, and returns `enqueue`'s value and the GPU time
    /// between the events in milliseconds: how CUDA programs time stream work (NVSHMEM's
    /// benchmarks included), so that `rshmem bench` measures the way they do.
    ///
    /// # Errors
    /// `enqueue`'s error, or a driver error creating, recording or waiting for the events.
    pub fn time_on_stream<R, E>(
        &self,
        enqueue: impl FnOnce(&CudaQueue) -> Result<R, E>,
    ) -> Result<(R, f64), E>
    where
        E: From<QueueError>,
    {
        let timed = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self
            .stream
            .record_event(timed)
            .during("cuEventRecord")
            .map_err(QueueError::from)?;
        let value = enqueue(self)?;
        let end = self
            .stream
            .record_event(timed)
            .during("cuEventRecord")
            .map_err(QueueError::from)?;
        let ms = start
            .elapsed_ms(&end)
            .during("cuEventElapsedTime")
            .map_err(QueueError::from)?;
        Ok((value, f64::from(ms)))
    }

    /// Makes the operations issued next on this queue run after the work enqueued so far on
    /// `stream`, a stream of the program's own (the C API's `cudaStream_t`): an event
    /// recorded on `stream` that this queue's stream waits for. The calling thread does not
    /// wait.
    ///
    /// # Safety
    /// `stream` is null (the legacy default stream) or a live stream of this PE's GPU's
    /// primary context, the one the CUDA runtime API uses.
    ///
    /// # Errors
    /// [`QueueError::Lost`] naming the driver call that failed (a stream of another context
    /// or a destroyed one fails there).
    pub unsafe fn wait_for_stream(&self, stream: *mut c_void) -> Result<(), QueueError> {
        let event = self.idle_event()?;
        // SAFETY: the event is live, and `stream` is null or a live stream of this context
        // (the caller's promise).
        unsafe { sys::cuEventRecord(event.cu_event(), stream.cast()) }.during("cuEventRecord")?;
        // SAFETY: both are live; the wait takes the event's current record, so the event may
        // be recorded again at once.
        unsafe { sys::cuStreamWaitEvent(self.stream.cu_stream(), event.cu_event(), 0) }
            .during("cuStreamWaitEvent")?;
        self.idle_events.borrow_mut().push(event);
        Ok(())
    }

    /// Makes the work enqueued next on `stream` (as in [`CudaQueue::wait_for_stream`]) run
    /// after every operation issued on this queue so far. The calling thread does not wait.
    ///
    /// # Safety
    /// As [`CudaQueue::wait_for_stream`].
    ///
    /// # Errors
    /// As [`CudaQueue::wait_for_stream`].
    pub unsafe fn order_stream_after(&self, stream: *mut c_void) -> Result<(), QueueError> {
        // An idle queue has nothing to order after: no event, and no wait that the stream's
        // next kernel would pay for (a few µs an on-stream collective on an H200).
        // SAFETY: the queue's stream lives as long as the queue.
        if unsafe { sys::cuStreamQuery(self.stream.cu_stream()) } == sys::CUresult::CUDA_SUCCESS {
            return Ok(());
        }
        let event = self.record_event()?;
        // SAFETY: the event is live, `stream` as the caller promises; the wait takes the
        // event's current record, so the event may be reused at once.
        unsafe { sys::cuStreamWaitEvent(stream.cast(), event.cu_event(), 0) }
            .during("cuStreamWaitEvent")?;
        self.idle_events.borrow_mut().push(event);
        Ok(())
    }
}
