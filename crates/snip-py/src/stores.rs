//! The store each call uses, opened from `SNIP_*` variables (and `HERMES_HOME`).

use snip_store::StoreHandle;

use crate::settings::Overrides;

/// Opens the store the variables describe: `SNIP_STORE_DIR`, else
/// `$HERMES_HOME/cache/snip`, else the XDG cache directory. Never fails: a store that
/// is off or cannot be opened is a [`StoreHandle`] variant saying so.
pub fn handle(overrides: &Overrides) -> StoreHandle {
    StoreHandle::from_lookup(|k| overrides.lookup(k))
}
