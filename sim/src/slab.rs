//! A table of values whose places are reused once freed, named by a 32-bit index: for what
//! an event or an operation in flight refers to without holding it.

/// Values by index; a freed place takes the next value inserted.
#[derive(Debug)]
pub(crate) struct Slab<T> {
    values: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            values: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T: Copy> Slab<T> {
    /// Keeps `value`; returns its index.
    ///
    /// # Panics
    /// If 2^32 values are held at once.
    pub(crate) fn insert(&mut self, value: T) -> u32 {
        match self.free.pop() {
            Some(index) => {
                self.values[index as usize] = value;
                index
            }
            None => {
                self.values.push(value);
                u32::try_from(self.values.len() - 1).expect("fewer than 2^32 values at once")
            }
        }
    }

    /// The value at `index`, which stays.
    pub(crate) fn get(&self, index: u32) -> T {
        self.values[index as usize]
    }

    /// The value at `index`, whose place is then free.
    pub(crate) fn remove(&mut self, index: u32) -> T {
        self.free.push(index);
        self.values[index as usize]
    }

    /// How many places were ever used (held or free).
    #[cfg(test)]
    pub(crate) fn places(&self) -> usize {
        self.values.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_place_is_reused() {
        let mut slab = Slab::default();
        let (a, b) = (slab.insert(10u64), slab.insert(20));
        assert_eq!((slab.get(a), slab.get(b)), (10, 20));
        assert_eq!(slab.remove(a), 10);
        let c = slab.insert(30);
        assert_eq!((c, slab.get(c), slab.places()), (a, 30, 2));
    }
}
