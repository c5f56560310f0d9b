//! The sandbox on Linux: a Landlock ruleset built from a [`SandboxPlan`] in Switchboard's
//! process (opening each folder, which allocates), and put on the child between `fork` and
//! `exec` (two system calls, nothing allocated). Landlock's domain is inherited by every
//! process the server starts and cannot be left: `setsid`, a double fork or a daemon stay in
//! it. Signals and abstract Unix sockets are scoped to the sandbox (ABI 6). With no network,
//! TCP `connect` and `bind` are refused (ABI 4), and the child also enters a network namespace
//! of its own where user namespaces are allowed, so UDP and DNS go nowhere either. With a list
//! of hosts, the one TCP port it may connect to is its proxy's (on 127.0.0.1; Landlock rules
//! are by port, so the same port elsewhere is not refused), and it binds none.
//!
//! A seccomp filter (built by `seccompiler` before the fork, installed last) closes what
//! Landlock on this ABI does not: without any network, UDP, raw and packet sockets (so a list
//! of hosts cannot be left by DNS or a datagram, and no network stands even where user
//! namespaces are not allowed); in every mode, new Unix sockets (the session bus, and the
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
    let mut sockets: Vec<SeccompRule> = Vec::new();
    if plan.network != Network::Any {
        for f in [libc::AF_INET, libc::AF_INET6] {
            for k in [libc::SOCK_DGRAM, libc::SOCK_RAW] {
                sockets.push(SeccompRule::new(vec![family(f)?, kind(k)?])?);
            }
        }
        sockets.push(SeccompRule::new(vec![family(libc::AF_PACKET)?])?);
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
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(u32::try_from(libc::EPERM).unwrap_or(1)),
        arch,
    )?;
    Ok(Some(filter.try_into()?))
}

/// Puts `command`'s child in the sandbox `plan` describes, before it runs its program;
/// `proxy` is the port of its proxy, with a list of hosts.
///
/// # Errors
/// The ruleset could not be built; the kernel has no Landlock.
pub fn confine(
    command: &mut tokio::process::Command,
    plan: &SandboxPlan,
    proxy: Option<u16>,
) -> io::Result<()> {
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
    std::fs::create_dir_all(&plan.private_dir)?;
    let mut ruleset = Some(ruleset(plan, proxy).map_err(io::Error::other)?);
    let filter = filter(plan).map_err(io::Error::other)?;
    let no_network = plan.network == Network::None;
    // SAFETY: the closure runs in the forked child before exec, and calls only unshare(2),
    // prctl(2), landlock_restrict_self(2) and seccomp(2); the ruleset and the filter were
    // built before the fork, and their errors are errno values (nothing is allocated).
    unsafe {
        command.pre_exec(move || {
            if no_network {
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
    Ok(())
}
