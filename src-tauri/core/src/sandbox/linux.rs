//! The sandbox on Linux: a Landlock ruleset built from a [`SandboxPlan`] in Switchboard's
//! process (opening each folder, which allocates), and put on the child between `fork` and
//! `exec` (two system calls, nothing allocated). Landlock's domain is inherited by every
//! process the server starts and cannot be left: `setsid`, a double fork or a daemon stay in
//! it. Signals and abstract Unix sockets are scoped to the sandbox (ABI 6). With no network,
//! TCP `connect` and `bind` are refused (ABI 4), and the child also enters a network namespace
//! of its own where user namespaces are allowed, so UDP and DNS go nowhere either.
//!
//! With a list of hosts, where user namespaces are allowed, the child also enters a network
//! of its own, brings its loopback up and listens there on [`INSIDE_PORT`]; that listening
//! socket is handed to Switchboard over a socket pair ([`Handoff`]), whose proxy accepts on it
//! and reaches the listed hosts from Switchboard's own network. Nothing else exists in the
//! child's network, so no address but its proxy can be reached at all. Where user namespaces
//! are not allowed, its proxy listens on this computer's 127.0.0.1 and Landlock holds the
//! child to that one TCP port — by port, not address (Landlock's rules are ports), which
//! Switchboard's log says when it starts such a server.
//!
//! A seccomp filter (built by `seccompiler` before the fork, installed last) closes what
//! Landlock on this ABI does not: without any network, UDP, raw and packet sockets (so a list
//! of hosts cannot be left by DNS or a datagram, and no network stands even where user
//! namespaces are not allowed), IP sockets other than plain TCP (MPTCP, SCTP: Landlock holds
//! TCP alone) and every family but IP's, Unix's and netlink's; in every mode, new Unix sockets (the session bus, and the
//! keychain behind it, ssh-agent's and gpg-agent's sockets: pathname sockets are beyond
//! Landlock before ABI 9), unless its program is Docker's, which talks to Docker's service by
//! one; and io_uring, which could open sockets past the filter. A pair of Unix sockets
//! (`socketpair`, how Node and Python talk to their own children) stays allowed. Each refusal
//! is `EPERM`, "Operation not permitted".

use std::io;

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetError, RulesetStatus, Scope, ABI,
};

use super::{Network, SandboxPlan};

/// The port a server's proxy listens on inside the server's own network.
pub const INSIDE_PORT: u16 = 3128;

/// How a child with a list of hosts reaches its proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// No proxy (no network, or any).
    None,
    /// Its proxy on this computer's 127.0.0.1, at this port.
    Port(u16),
    /// A network of its own, its proxy's socket handed over ([`Handoff`]).
    Inside,
}

/// Switchboard's end of the hand-over of the socket a child listens on inside its own
/// network.
#[derive(Debug)]
pub struct Handoff(std::os::fd::OwnedFd);

impl Handoff {
    /// The listening socket the child made inside its network, once it has started.
    ///
    /// # Errors
    /// The child sent none (it did not start).
    pub fn receive(self) -> io::Result<std::net::TcpListener> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut control = [0u64; 4];
        // SAFETY: every pointer in the message is to a local that outlives the call; the
        // control message read is checked for its level, type and length before its data.
        unsafe {
            let mut message: libc::msghdr = std::mem::zeroed();
            message.msg_iov = &raw mut iov;
            message.msg_iovlen = 1;
            message.msg_control = control.as_mut_ptr().cast();
            message.msg_controllen = std::mem::size_of_val(&control) as _;
            let got = libc::recvmsg(
                self.0.as_raw_fd(),
                &raw mut message,
                libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
            );
            if got < 0 {
                return Err(io::Error::last_os_error());
            }
            let header = libc::CMSG_FIRSTHDR(&raw const message);
            if header.is_null()
                || (*header).cmsg_level != libc::SOL_SOCKET
                || (*header).cmsg_type != libc::SCM_RIGHTS
                || ((*header).cmsg_len as usize) < libc::CMSG_LEN(4) as usize
            {
                return Err(io::Error::other("the sandboxed server sent no socket"));
            }
            let fd: libc::c_int = std::ptr::read_unaligned(libc::CMSG_DATA(header).cast());
            Ok(std::net::TcpListener::from_raw_fd(fd))
        }
    }
}

/// Whether this system lets a process make a user and network namespace of its own (some
/// distributions forbid it to unprivileged programs): a program is started that tries.
pub fn own_network_allowed() -> bool {
    use std::os::unix::process::CommandExt;
    let mut probe = std::process::Command::new("/bin/true");
    probe
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the closure makes one system call and allocates nothing.
    unsafe {
        probe.pre_exec(|| {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        });
    }
    probe.status().is_ok_and(|s| s.success())
}

/// In the child, inside its new network: brings the loopback up, listens on
/// 127.0.0.1:[`INSIDE_PORT`] and sends the listening socket over `to`. Only system calls, on
/// the stack.
///
/// # Safety
/// Called between fork and exec.
unsafe fn hand_over_listener(to: libc::c_int) -> io::Result<()> {
    let fail = || Err(io::Error::last_os_error());
    unsafe {
        let probe = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if probe < 0 {
            return fail();
        }
        let mut request: libc::ifreq = std::mem::zeroed();
        request.ifr_name[0] = b'l' as libc::c_char;
        request.ifr_name[1] = b'o' as libc::c_char;
        if libc::ioctl(probe, libc::SIOCGIFFLAGS as _, &raw mut request) < 0 {
            libc::close(probe);
            return fail();
        }
        request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        let up = libc::ioctl(probe, libc::SIOCSIFFLAGS as _, &raw const request);
        libc::close(probe);
        if up < 0 {
            return fail();
        }
        let listener = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if listener < 0 {
            return fail();
        }
        let mut address: libc::sockaddr_in = std::mem::zeroed();
        address.sin_family = libc::AF_INET as libc::sa_family_t;
        address.sin_port = INSIDE_PORT.to_be();
        address.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        if libc::bind(
            listener,
            (&raw const address).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ) < 0
            || libc::listen(listener, 128) < 0
        {
            libc::close(listener);
            return fail();
        }
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut control = [0u64; 4];
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &raw mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.as_mut_ptr().cast();
        message.msg_controllen = libc::CMSG_SPACE(4) as _;
        let header = libc::CMSG_FIRSTHDR(&raw const message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(4) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<libc::c_int>(), listener);
        let sent = libc::sendmsg(to, &raw const message, 0);
        libc::close(listener);
        if sent < 0 {
            return fail();
        }
    }
    Ok(())
}

/// The newest Landlock ABI the rules are written for (7 adds only logging).
const TARGET: ABI = ABI::V6;

/// The running kernel's Landlock ABI; `None` when it has none (or it is switched off).
pub fn landlock_abi() -> Option<u32> {
    // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with a null attribute and size 0 only asks.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    u32::try_from(abi).ok().filter(|a| *a > 0)
}

/// The ruleset for `plan`, built in this process; `proxy` is the port of its proxy (with a
/// list of hosts).
///
/// # Errors
/// The kernel refused the ruleset or a rule.
fn ruleset(
    plan: &SandboxPlan,
    proxy: Option<u16>,
) -> Result<landlock::RulesetCreated, RulesetError> {
    let all = AccessFs::from_all(TARGET);
    let read = AccessFs::from_read(TARGET);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(all)?
        .scope(Scope::from_all(TARGET))?;
    if plan.network != Network::Any {
        ruleset = ruleset.handle_access(AccessNet::from_all(TARGET))?;
    }
    let devices = [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/tty",
        "/dev/pts",
        "/dev/shm",
    ];
    let created = ruleset
        .create()?
        .add_rules(path_beneath_rules(&plan.read, read))?
        .add_rules(path_beneath_rules(&plan.write, all))?
        .add_rules(path_beneath_rules(devices, all))?;
    match (plan.network, proxy) {
        (Network::Hosts, Some(port)) => created.add_rule(NetPort::new(port, AccessNet::ConnectTcp)),
        _ => Ok(created),
    }
}

/// The seccomp filter for `plan`: see the module's words. `None` on an architecture the
/// filter is not written for.
///
/// # Errors
/// The filter could not be compiled.
pub fn filter(plan: &SandboxPlan) -> Result<Option<seccompiler::BpfProgram>, seccompiler::Error> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond,
        SeccompFilter, SeccompRule,
    };
    let arch = if cfg!(target_arch = "x86_64") {
        seccompiler::TargetArch::x86_64
    } else if cfg!(target_arch = "aarch64") {
        seccompiler::TargetArch::aarch64
    } else if cfg!(target_arch = "riscv64") {
        seccompiler::TargetArch::riscv64
    } else {
        return Ok(None);
    };
    let family = |f: libc::c_int| Cond::new(0, Len::Dword, Op::Eq, u64::try_from(f).unwrap_or(0));
    // The type without SOCK_NONBLOCK and SOCK_CLOEXEC.
    let kind = |k: libc::c_int| {
        Cond::new(
            1,
            Len::Dword,
            Op::MaskedEq(0xf),
            u64::try_from(k).unwrap_or(0),
        )
    };
    let arg =
        |i: u8, op: Op, v: libc::c_int| Cond::new(i, Len::Dword, op, u64::try_from(v).unwrap_or(0));
    let mut sockets: Vec<SeccompRule> = Vec::new();
    if plan.network != Network::Any {
        for f in [libc::AF_INET, libc::AF_INET6] {
            for k in [libc::SOCK_DGRAM, libc::SOCK_RAW] {
                sockets.push(SeccompRule::new(vec![family(f)?, kind(k)?])?);
            }
            // Plain TCP only: Landlock holds TCP, not MPTCP, SCTP or SMC over IP.
            sockets.push(SeccompRule::new(vec![
                family(f)?,
                arg(2, Op::Ne, 0)?,
                arg(2, Op::Ne, libc::IPPROTO_TCP)?,
            ])?);
        }
        // No other family but Unix's and netlink's (a name lookup asks the kernel's routes).
        sockets.push(SeccompRule::new(vec![
            arg(0, Op::Ne, libc::AF_UNIX)?,
            arg(0, Op::Ne, libc::AF_INET)?,
            arg(0, Op::Ne, libc::AF_INET6)?,
            arg(0, Op::Ne, libc::AF_NETLINK)?,
        ])?);
    }
    if !plan.unix_sockets {
        sockets.push(SeccompRule::new(vec![family(libc::AF_UNIX)?])?);
    }
    let mut rules: std::collections::BTreeMap<i64, Vec<SeccompRule>> =
        std::collections::BTreeMap::new();
    if !sockets.is_empty() {
        rules.insert(libc::SYS_socket, sockets);
    }
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        rules.insert(call, Vec::new());
    }
    // Its group was made before the filter (std's `process_group` comes before `pre_exec`);
    // it may not leave it, so ending the group ends all it started.
    if plan.stays_in_group {
        for call in [libc::SYS_setsid, libc::SYS_setpgid] {
            rules.insert(call, Vec::new());
        }
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(u32::try_from(libc::EPERM).unwrap_or(1)),
        arch,
    )?;
    Ok(Some(filter.try_into()?))
}

/// Puts `command`'s child in the sandbox `plan` describes, before it runs its program;
/// `route` is how it reaches its proxy, with a list of hosts. With [`Route::Inside`], the
/// [`Handoff`] that gives its proxy's listening socket once the child has started.
///
/// # Errors
/// The ruleset could not be built; the kernel has no Landlock.
pub fn confine(
    command: &mut tokio::process::Command,
    plan: &SandboxPlan,
    route: Route,
) -> io::Result<Option<Handoff>> {
    let proxy = match route {
        Route::None => None,
        Route::Port(port) => Some(port),
        Route::Inside => Some(INSIDE_PORT),
    };
    if landlock_abi().is_none() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this kernel has no Landlock: the server cannot be sandboxed",
        ));
    }
    if plan.network == Network::Hosts && landlock_abi().is_none_or(|abi| abi < 4) {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this kernel's Landlock cannot hold a server to its proxy (that needs Linux 6.7): \
             give it no network or any",
        ));
    }
    // (Its own folder is made by the caller, with its TMPDIR: `mcp::stdio`.)
    let mut ruleset = Some(ruleset(plan, proxy).map_err(io::Error::other)?);
    let filter = filter(plan).map_err(io::Error::other)?;
    let no_network = plan.network == Network::None;
    // The socket pair the child sends its proxy's listening socket over.
    let (handoff, child_end) = if route == Route::Inside {
        let (ours, theirs) = std::os::unix::net::UnixDatagram::pair()?;
        (
            Some(Handoff(std::os::fd::OwnedFd::from(ours))),
            Some(std::os::fd::OwnedFd::from(theirs)),
        )
    } else {
        (None, None)
    };
    // SAFETY: the closure runs in the forked child before exec, and calls only unshare(2),
    // socket(2), ioctl(2), bind(2), listen(2), sendmsg(2), close(2), prctl(2),
    // landlock_restrict_self(2) and seccomp(2), on the stack; the ruleset and the filter were
    // built before the fork, and their errors are errno values (nothing is allocated).
    unsafe {
        command.pre_exec(move || {
            if let Some(end) = &child_end {
                use std::os::fd::AsRawFd;
                // Its own network, where its proxy's socket is all there is.
                if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0 {
                    return Err(io::Error::last_os_error());
                }
                hand_over_listener(end.as_raw_fd())?;
            } else if no_network {
                // A network of its own (nothing but a loopback that is down); where user
                // namespaces are not allowed, Landlock's refusal of TCP stands alone.
                let _ = libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET);
            }
            let ruleset = ruleset
                .take()
                .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
            match ruleset.restrict_self() {
                Ok(status) if status.ruleset != RulesetStatus::NotEnforced => {}
                Ok(_) => return Err(io::Error::from_raw_os_error(libc::ENOSYS)),
                Err(_) => return Err(io::Error::from_raw_os_error(libc::EPERM)),
            }
            // Last: nothing after it opens a socket.
            match &filter {
                Some(filter) => seccompiler::apply_filter(filter)
                    .map_err(|_| io::Error::from_raw_os_error(libc::EPERM)),
                None => Ok(()),
            }
        });
    }
    Ok(handoff)
}
