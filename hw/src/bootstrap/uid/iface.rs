//! The address rank 0 listens on for the unique-id bootstrap: an interface's address of the
//! family NVSHMEM's variables ask for, chosen as NVSHMEM's documentation describes (an
//! interface the user names, else InfiniBand's `ib*` first, then any other but loopback and
//! Docker's bridges, loopback last).

use std::ffi::{CStr, OsString};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6, ToSocketAddrs};

use super::super::BootstrapError;

/// NVSHMEM's variable naming the interface: a prefix (`ib`, `eth0`), `=NAME` for exactly one,
/// or `^PREFIX` for every interface but those.
pub const SOCK_IFNAME_VAR: &str = "NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME";
/// NVSHMEM's variable naming the address family: `AF_INET` (the default) or `AF_INET6`.
pub const SOCK_FAMILY_VAR: &str = "NVSHMEM_BOOTSTRAP_UID_SOCK_FAMILY";
/// NVSHMEM's variable naming where rank 0 listens, fixed in advance: `IPV4:PORT`,
/// `[IPV6]:PORT` (`[fe80::1%eth0]:PORT` for a link-local address) or `HOST:PORT`.
pub const SESSION_ID_VAR: &str = "NVSHMEM_BOOTSTRAP_UID_SESSION_ID";

/// The interfaces' addresses of one family, as `getifaddrs` lists them, with port 0 (and an
/// IPv6 address's scope, its interface's index, which a link-local address needs).
fn interfaces(ipv6: bool) -> Result<Vec<(String, SocketAddr)>, BootstrapError> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a list we free below.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return Err(BootstrapError::io(
            "cannot list the network interfaces (getifaddrs) for the unique-id bootstrap",
            std::io::Error::last_os_error(),
        ));
    }
    let mut found = Vec::new();
    let mut at = list;
    while !at.is_null() {
        // SAFETY: `at` is an element of the list getifaddrs returned, not yet freed.
        let entry = unsafe { &*at };
        at = entry.ifa_next;
        if entry.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: ifa_name is a C string for the list's life.
        let name = unsafe { CStr::from_ptr(entry.ifa_name) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: ifa_addr points to a sockaddr of the family its sa_family says.
        let address = unsafe {
            match i32::from((*entry.ifa_addr).sa_family) {
                libc::AF_INET if !ipv6 => {
                    let sin = &*entry.ifa_addr.cast::<libc::sockaddr_in>();
                    let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
                    Some(SocketAddr::V4(SocketAddrV4::new(ip, 0)))
                }
                libc::AF_INET6 if ipv6 => {
                    let sin6 = &*entry.ifa_addr.cast::<libc::sockaddr_in6>();
                    let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
                    Some(SocketAddr::V6(SocketAddrV6::new(
                        ip,
                        0,
                        0,
                        sin6.sin6_scope_id,
                    )))
                }
                _ => None,
            }
        };
        if let Some(address) = address {
            found.push((name, address));
        }
    }
    // SAFETY: `list` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(list) };
    Ok(found)
}

/// Whether interface `name` matches the user's `pattern` ([`SOCK_IFNAME_VAR`]).
fn matches(pattern: &str, name: &str) -> bool {
    if let Some(exact) = pattern.strip_prefix('=') {
        name == exact
    } else if let Some(excluded) = pattern.strip_prefix('^') {
        !name.starts_with(excluded)
    } else {
        name.starts_with(pattern)
    }
}

/// How much the automatic choice prefers an interface: lower first.
fn preference(name: &str) -> u8 {
    if name.starts_with("ib") {
        0
    } else if name.starts_with("lo") {
        3
    } else if name.starts_with("docker") {
        2
    } else {
        1
    }
}

/// The address to listen on (port 0), from the variables of `lookup`.
///
/// # Errors
/// [`BootstrapError::Env`] for a family other than `AF_INET` or `AF_INET6`, or when no
/// interface of the family matches (naming the interfaces there are).
pub(crate) fn listen_address(
    mut lookup: impl FnMut(&str) -> Option<OsString>,
) -> Result<SocketAddr, BootstrapError> {
    let family = lookup(SOCK_FAMILY_VAR).map(|v| v.to_string_lossy().trim().to_ascii_uppercase());
    let ipv6 = match family.as_deref() {
        None | Some("" | "AF_INET") => false,
        Some("AF_INET6") => true,
        Some(other) => {
            return Err(BootstrapError::Env(format!(
                "{SOCK_FAMILY_VAR}={other} is not an address family: set it to AF_INET (the \
                 default) or AF_INET6"
            )));
        }
    };
    let all = interfaces(ipv6)?;
    let pattern = lookup(SOCK_IFNAME_VAR)
        .map(|v| v.to_string_lossy().trim().to_string())
        .filter(|p| !p.is_empty());
    let chosen = match &pattern {
        Some(pattern) => all.iter().find(|(name, _)| matches(pattern, name)),
        None => all.iter().min_by_key(|(name, _)| preference(name)),
    };
    chosen.map(|(_, address)| *address).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|(name, _)| name.as_str()).collect();
        BootstrapError::Env(format!(
            "no network interface of family {} matches {}: this machine has {}; set \
             {SOCK_IFNAME_VAR} to one of them, or {SOCK_FAMILY_VAR} to the other family",
            if ipv6 { "AF_INET6" } else { "AF_INET" },
            pattern.map_or_else(|| "any".to_string(), |p| format!("{SOCK_IFNAME_VAR}={p}")),
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ))
    })
}

/// The address [`SESSION_ID_VAR`] names, resolved; `None` when it is unset or empty.
///
/// # Errors
/// [`BootstrapError::Env`] naming the variable and its forms when the value has no port, port
/// 0, or a host that does not resolve.
pub(crate) fn session_address(
    mut lookup: impl FnMut(&str) -> Option<OsString>,
) -> Result<Option<SocketAddr>, BootstrapError> {
    let Some(value) = lookup(SESSION_ID_VAR)
        .map(|v| v.to_string_lossy().trim().to_string())
        .filter(|v| !v.is_empty())
    else {
        return Ok(None);
    };
    let refuse = |why: &str| {
        BootstrapError::Env(format!(
            "{SESSION_ID_VAR}={value} {why}: write IPV4:PORT, [IPV6]:PORT (with %INTERFACE \
             for a link-local address) or HOST:PORT, with a port from 1 to 65535"
        ))
    };
    // The brackets of an IPv6 address go before resolving, which takes `fe80::1%eth0`.
    let (host, port) = match value.strip_prefix('[') {
        Some(rest) => rest
            .split_once("]:")
            .ok_or_else(|| refuse("has no port after the bracketed address"))?,
        None => value
            .rsplit_once(':')
            .ok_or_else(|| refuse("has no port"))?,
    };
    let port: u16 = port
        .parse()
        .ok()
        .filter(|&p| p != 0)
        .ok_or_else(|| refuse("has no usable port"))?;
    let resolved = (host, port)
        .to_socket_addrs()
        .map_err(|e| refuse(&format!("does not resolve ({e})")))?
        .next()
        .ok_or_else(|| refuse("resolves to no address"))?;
    Ok(Some(resolved))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interface_pattern_is_a_prefix_an_exact_name_or_an_exclusion() {
        assert!(matches("eth", "eth0"));
        assert!(!matches("=eth", "eth0"));
        assert!(matches("=eth0", "eth0"));
        assert!(!matches("^docker", "docker0"));
        assert!(matches("^docker", "eth0"));
    }

    #[test]
    fn loopback_is_always_there_for_ipv4_and_a_bad_family_is_refused() {
        let lo = listen_address(|name| (name == SOCK_IFNAME_VAR).then(|| "lo".into())).unwrap();
        assert!(lo.ip().is_loopback(), "{lo}");
        let bad = listen_address(|name| (name == SOCK_FAMILY_VAR).then(|| "AF_UNIX".into()));
        assert!(bad.unwrap_err().to_string().contains("AF_INET6"));
    }

    #[test]
    fn a_session_id_is_an_address_and_a_port_in_any_of_nvshmem_s_forms() {
        let session = |value: &str| {
            let value = value.to_string();
            session_address(move |name| (name == SESSION_ID_VAR).then(|| value.clone().into()))
        };
        let v4 = session("127.0.0.1:4321").unwrap().unwrap();
        assert_eq!(v4.to_string(), "127.0.0.1:4321");
        let v6 = session("[::1]:4321").unwrap().unwrap();
        assert_eq!(v6.to_string(), "[::1]:4321");
        let scoped = session("[fe80::1%lo]:4321").unwrap().unwrap();
        let SocketAddr::V6(scoped) = scoped else {
            panic!("{scoped}")
        };
        assert_ne!(scoped.scope_id(), 0, "the interface's index");
        assert!(
            session("localhost:4321")
                .unwrap()
                .unwrap()
                .ip()
                .is_loopback()
        );
        assert_eq!(session("").unwrap(), None);
        for bad in [
            "127.0.0.1",
            "127.0.0.1:0",
            "[::1]4321",
            "no-such-host.invalid:1",
        ] {
            let e = session(bad).unwrap_err().to_string();
            assert!(
                e.contains(SESSION_ID_VAR) && e.contains("HOST:PORT"),
                "{bad}: {e}"
            );
        }
    }
}
