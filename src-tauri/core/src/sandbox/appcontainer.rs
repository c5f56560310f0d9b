//! The sandbox on Windows: an AppContainer made from the same [`SandboxPlan`] Linux enforces
//! with Landlock. The plan becomes a [`Container`] — its name (one per server), its
//! capabilities (the network: none, or the internet and the local network for any) and the
//! folders granted to it (read and run, or read and write) — and the server's program is
//! started by Switchboard's own program as a launcher (`switchboard --sandbox-launch
//! CONTAINER -- program args…`, as `sandbox-exec` is on macOS): it makes the AppContainer's
//! profile, adds the container to each granted folder's access list, starts the program in the
//! container with the launcher's own standard handles, and waits for it, so the Job Object
//! that holds the launcher holds the program and everything it starts. An AppContainer reads
//! only what grants it (the system's folders do, to every container); the person's files do
//! not. A list of hosts is not enforced here: a program in an AppContainer cannot reach its
//! proxy on this computer without an exemption only an administrator can give, so such a
//! server is refused with that said.
//!
//! The translation and the command line are written and tested on every system; the launcher
//! runs on Windows.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use super::{Network, SandboxPlan};

/// The first argument that makes Switchboard's program the launcher.
pub const LAUNCH_FLAG: &str = "--sandbox-launch";

/// The capability of reaching the internet (`internetClient`).
pub const INTERNET_CLIENT: &str = "S-1-15-3-1";
/// The capability of reaching the local network, and of being reached on it
/// (`privateNetworkClientServer`).
pub const PRIVATE_NETWORK: &str = "S-1-15-3-3";

/// One folder granted to the container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub path: PathBuf,
    /// Read and write (else read and run).
    pub write: bool,
}

/// What the launcher makes and starts the program in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Container {
    /// `Switchboard.<server>`: letters, digits, dots and dashes, at most 64.
    pub name: String,
    /// Capability SIDs.
    pub capabilities: Vec<String>,
    pub grants: Vec<Grant>,
}

/// The container for `plan`.
///
/// # Errors
/// A list of hosts, which cannot be enforced on Windows; in words.
pub fn container(plan: &SandboxPlan) -> Result<Container, String> {
    let capabilities = match plan.network {
        Network::None => Vec::new(),
        Network::Any => vec![INTERNET_CLIENT.to_owned(), PRIVATE_NETWORK.to_owned()],
        Network::Hosts => {
            return Err(
                "a list of hosts is not enforced on Windows yet (a program in a \
                        sandbox there cannot reach its proxy on this computer): give this \
                        server no network or any"
                    .to_owned(),
            )
        }
    };
    let server = plan
        .private_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name: String = format!("Switchboard.{server}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    // The grants and the network are in its name: a container once given a folder keeps the
    // access list entry, so a narrower sandbox is a new container, not the old one told less.
    let mut grants_text = capabilities.join(",");
    for grant in plan.read.iter().chain(&plan.write) {
        grants_text.push('|');
        grants_text.push_str(&grant.to_string_lossy());
    }
    grants_text.push_str(&format!("|{}", plan.write.len()));
    let digest = sha2::Sha256::digest(grants_text.as_bytes());
    let suffix = hex::encode(&digest[..4]);
    name.truncate(64 - 9);
    name.push('.');
    name.push_str(&suffix);
    // Never a drive, nor the home folder or a folder holding it: those are not the plan's to
    // give whole (it gives the home's parts).
    let grantable = |p: &PathBuf| p.parent().is_some() && !plan.home.starts_with(p);
    let mut grants: Vec<Grant> = plan
        .read
        .iter()
        .filter(|p| grantable(p))
        .map(|p| Grant {
            path: p.clone(),
            write: false,
        })
        .collect();
    grants.extend(plan.write.iter().filter(|p| grantable(p)).map(|p| Grant {
        path: p.clone(),
        write: true,
    }));
    Ok(Container {
        name,
        capabilities,
        grants,
    })
}

/// The command line that runs `program` with `args` in `container`, `launcher` being
/// Switchboard's own program: `launcher --sandbox-launch CONTAINER -- program args…`.
pub fn command_line(
    container: &Container,
    launcher: &Path,
    program: &Path,
    args: &[String],
) -> (PathBuf, Vec<OsString>) {
    let mut line: Vec<OsString> = vec![
        LAUNCH_FLAG.into(),
        serde_json::to_string(container).unwrap_or_default().into(),
        "--".into(),
        program.as_os_str().to_owned(),
    ];
    line.extend(args.iter().map(OsString::from));
    (launcher.to_path_buf(), line)
}

/// One argument quoted as Windows programs split their command line (the C runtime's rules):
/// in quotes when it holds a space, a tab or a quote, or is empty; a quote escaped, and the
/// backslashes before a quote doubled.
pub fn quoted(arg: &str) -> String {
    if !arg.is_empty() && !arg.contains([' ', '\t', '\n', '"']) {
        return arg.to_owned();
    }
    let mut out = String::from("\"");
    let mut backslashes = 0usize;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                out.push_str(&"\\".repeat(backslashes * 2 + 1));
                out.push('"');
                backslashes = 0;
            }
            _ => {
                out.push_str(&"\\".repeat(backslashes));
                out.push(c);
                backslashes = 0;
            }
        }
    }
    out.push_str(&"\\".repeat(backslashes * 2));
    out.push('"');
    out
}

/// The command line the launcher gives `CreateProcessW`: a batch file (`npx.cmd`) runs
/// through `cmd.exe /d /s /c`, anything else as itself.
pub fn process_line(program: &str, args: &[String]) -> String {
    let mut line = quoted(program);
    for arg in args {
        line.push(' ');
        line.push_str(&quoted(arg));
    }
    let lower = program.to_ascii_lowercase();
    if lower.ends_with(".cmd") || lower.ends_with(".bat") {
        format!("cmd.exe /d /s /c \"{line}\"")
    } else {
        line
    }
}

/// Whether this program can launch sandboxed servers: it is Switchboard's own (which
/// answers [`LAUNCH_FLAG`]), not a test or another host of the core.
pub fn launcher() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let stem = exe.file_stem()?.to_string_lossy().to_ascii_lowercase();
    (stem == "switchboard").then_some(exe)
}

/// The launcher's work, on Windows: `args` are what follows [`LAUNCH_FLAG`] (the container,
/// `--`, the program and its arguments). Returns the program's exit code, or 126 with the
/// reason on stderr when it could not be started in its container.
#[cfg(windows)]
pub fn launch_main(args: &[OsString]) -> i32 {
    match launch(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("switchboard: the server could not be started in its sandbox: {e}");
            126
        }
    }
}

#[cfg(windows)]
fn launch(args: &[OsString]) -> Result<i32, String> {
    let [container, dash, program, rest @ ..] = args else {
        return Err("usage: --sandbox-launch CONTAINER -- PROGRAM [ARGS…]".to_owned());
    };
    if dash != "--" {
        return Err("usage: --sandbox-launch CONTAINER -- PROGRAM [ARGS…]".to_owned());
    }
    let container: Container = serde_json::from_str(&container.to_string_lossy())
        .map_err(|e| format!("the container is not readable: {e}"))?;
    let rest: Vec<String> = rest
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let line = process_line(&program.to_string_lossy(), &rest);
    // SAFETY: see `applied::run`: every pointer handed to Windows outlives the call.
    unsafe { applied::run(&container, &line) }
}

#[cfg(windows)]
mod applied {
    //! The system calls: the profile, the grants, the process in its container.

    use windows::core::{HRESULT, PCWSTR, PWSTR};
    use windows::Win32::Foundation::{CloseHandle, LocalFree, ERROR_ALREADY_EXISTS, HLOCAL};
    use windows::Win32::Security::Authorization::{
        ConvertStringSidToSidW, GetNamedSecurityInfoW, SetEntriesInAclW, SetNamedSecurityInfoW,
        EXPLICIT_ACCESS_W, GRANT_ACCESS, SE_FILE_OBJECT, TRUSTEE_IS_SID,
        TRUSTEE_IS_WELL_KNOWN_GROUP, TRUSTEE_W,
    };
    use windows::Win32::Security::Isolation::{
        CreateAppContainerProfile, DeriveAppContainerSidFromAppContainerName,
    };
    use windows::Win32::Security::{
        ACL, DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, PSID, SECURITY_CAPABILITIES,
        SID_AND_ATTRIBUTES, SUB_CONTAINERS_AND_OBJECTS_INHERIT,
    };
    use windows::Win32::Storage::FileSystem::{
        DELETE, FILE_GENERIC_EXECUTE, FILE_GENERIC_READ, FILE_GENERIC_WRITE,
    };
    use windows::Win32::System::Console::{
        GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
    };
    use windows::Win32::System::Threading::{
        CreateProcessW, DeleteProcThreadAttributeList, GetExitCodeProcess,
        InitializeProcThreadAttributeList, UpdateProcThreadAttribute, WaitForSingleObject,
        EXTENDED_STARTUPINFO_PRESENT, INFINITE, LPPROC_THREAD_ATTRIBUTE_LIST, PROCESS_INFORMATION,
        PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES, STARTF_USESTDHANDLES, STARTUPINFOEXW,
    };

    use super::Container;

    /// `SE_GROUP_ENABLED`: a capability in force.
    const ENABLED: u32 = 0x4;

    fn wide(text: &str) -> Vec<u16> {
        text.encode_utf16().chain(std::iter::once(0)).collect()
    }

    /// The container's SID, its profile made if it is not there yet.
    unsafe fn container_sid(name: &str) -> Result<PSID, String> {
        let name = wide(name);
        let description = wide("Switchboard's sandbox for one MCP server");
        match unsafe {
            CreateAppContainerProfile(
                PCWSTR(name.as_ptr()),
                PCWSTR(name.as_ptr()),
                PCWSTR(description.as_ptr()),
                None,
            )
        } {
            Ok(sid) => Ok(sid),
            Err(e) if e.code() == HRESULT::from_win32(ERROR_ALREADY_EXISTS.0) => {
                unsafe { DeriveAppContainerSidFromAppContainerName(PCWSTR(name.as_ptr())) }
                    .map_err(|e| format!("its container: {e}"))
            }
            Err(e) => Err(format!("its container: {e}")),
        }
    }

    /// Adds `sid` to `path`'s access list, for its whole tree.
    unsafe fn grant(path: &std::path::Path, sid: PSID, write: bool) -> Result<(), String> {
        let name = wide(&path.to_string_lossy());
        let mut old: *mut ACL = std::ptr::null_mut();
        let mut descriptor = PSECURITY_DESCRIPTOR::default();
        let found = unsafe {
            GetNamedSecurityInfoW(
                PCWSTR(name.as_ptr()),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                None,
                None,
                Some(&mut old),
                None,
                &mut descriptor,
            )
        };
        if found.is_err() {
            return Err(format!("{}: its access list: {found:?}", path.display()));
        }
        let mut rights = FILE_GENERIC_READ.0 | FILE_GENERIC_EXECUTE.0;
        if write {
            rights |= FILE_GENERIC_WRITE.0 | DELETE.0;
        }
        let access = EXPLICIT_ACCESS_W {
            grfAccessPermissions: rights,
            grfAccessMode: GRANT_ACCESS,
            grfInheritance: SUB_CONTAINERS_AND_OBJECTS_INHERIT,
            Trustee: TRUSTEE_W {
                TrusteeForm: TRUSTEE_IS_SID,
                TrusteeType: TRUSTEE_IS_WELL_KNOWN_GROUP,
                ptstrName: PWSTR(sid.0.cast()),
                ..TRUSTEE_W::default()
            },
        };
        let mut new: *mut ACL = std::ptr::null_mut();
        let merged = unsafe { SetEntriesInAclW(Some(&[access]), Some(old), &mut new) };
        let result = if merged.is_err() {
            Err(format!("{}: {merged:?}", path.display()))
        } else {
            let set = unsafe {
                SetNamedSecurityInfoW(
                    PCWSTR(name.as_ptr()),
                    SE_FILE_OBJECT,
                    DACL_SECURITY_INFORMATION,
                    None,
                    None,
                    Some(new),
                    None,
                )
            };
            if set.is_err() {
                Err(format!("{}: {set:?}", path.display()))
            } else {
                Ok(())
            }
        };
        unsafe {
            if !new.is_null() {
                LocalFree(Some(HLOCAL(new.cast())));
            }
            LocalFree(Some(HLOCAL(descriptor.0)));
        }
        result
    }

    /// Makes the container, grants its folders, starts `line` in it with this process's
    /// standard handles, and waits for it.
    ///
    /// # Safety
    /// Calls Windows with pointers to locals that outlive each call.
    pub(super) unsafe fn run(container: &Container, line: &str) -> Result<i32, String> {
        let sid = unsafe { container_sid(&container.name) }?;
        for grant in container.grants.iter().filter(|g| g.path.exists()) {
            unsafe { grant_or_say(grant, sid) };
        }
        let mut capabilities: Vec<SID_AND_ATTRIBUTES> = Vec::new();
        for text in &container.capabilities {
            let text = wide(text);
            let mut capability = PSID::default();
            unsafe { ConvertStringSidToSidW(PCWSTR(text.as_ptr()), &mut capability) }
                .map_err(|e| format!("a capability: {e}"))?;
            capabilities.push(SID_AND_ATTRIBUTES {
                Sid: capability,
                Attributes: ENABLED,
            });
        }
        let security = SECURITY_CAPABILITIES {
            AppContainerSid: sid,
            Capabilities: if capabilities.is_empty() {
                std::ptr::null_mut()
            } else {
                capabilities.as_mut_ptr()
            },
            CapabilityCount: u32::try_from(capabilities.len()).unwrap_or(0),
            Reserved: 0,
        };
        let mut size = 0usize;
        // The first call only says how large the list is.
        let _ = unsafe { InitializeProcThreadAttributeList(None, 1, None, &mut size) };
        // Pointer-aligned, as the list's own layout wants.
        let mut storage = vec![0usize; size.div_ceil(std::mem::size_of::<usize>())];
        let list = LPPROC_THREAD_ATTRIBUTE_LIST(storage.as_mut_ptr().cast());
        unsafe { InitializeProcThreadAttributeList(Some(list), 1, None, &mut size) }
            .map_err(|e| format!("its attributes: {e}"))?;
        let started = (|| -> Result<i32, String> {
            unsafe {
                UpdateProcThreadAttribute(
                    list,
                    0,
                    PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES as usize,
                    Some(std::ptr::from_ref(&security).cast()),
                    std::mem::size_of::<SECURITY_CAPABILITIES>(),
                    None,
                    None,
                )
            }
            .map_err(|e| format!("its container's attribute: {e}"))?;
            let mut info = STARTUPINFOEXW::default();
            info.StartupInfo.cb = u32::try_from(std::mem::size_of::<STARTUPINFOEXW>()).unwrap_or(0);
            info.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
            unsafe {
                info.StartupInfo.hStdInput = GetStdHandle(STD_INPUT_HANDLE).unwrap_or_default();
                info.StartupInfo.hStdOutput = GetStdHandle(STD_OUTPUT_HANDLE).unwrap_or_default();
                info.StartupInfo.hStdError = GetStdHandle(STD_ERROR_HANDLE).unwrap_or_default();
            }
            info.lpAttributeList = list;
            let mut line = wide(line);
            let mut process = PROCESS_INFORMATION::default();
            unsafe {
                CreateProcessW(
                    PCWSTR::null(),
                    Some(PWSTR(line.as_mut_ptr())),
                    None,
                    None,
                    true,
                    EXTENDED_STARTUPINFO_PRESENT,
                    None,
                    PCWSTR::null(),
                    &info.StartupInfo,
                    &mut process,
                )
            }
            .map_err(|e| format!("the program: {e}"))?;
            let mut code = 1u32;
            unsafe {
                WaitForSingleObject(process.hProcess, INFINITE);
                let _ = GetExitCodeProcess(process.hProcess, &mut code);
                let _ = CloseHandle(process.hThread);
                let _ = CloseHandle(process.hProcess);
            }
            Ok(i32::from_ne_bytes(code.to_ne_bytes()))
        })();
        unsafe { DeleteProcThreadAttributeList(list) };
        for capability in capabilities {
            unsafe { LocalFree(Some(HLOCAL(capability.Sid.0))) };
        }
        started
    }

    /// Grants one folder; one that cannot be granted is said on stderr (the server's log),
    /// and the server then meets the refusal it would anyway.
    unsafe fn grant_or_say(grant: &super::Grant, sid: PSID) {
        if let Err(e) = unsafe { self::grant(&grant.path, sid, grant.write) } {
            eprintln!("switchboard: the sandbox could not give the server {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(network: Network) -> SandboxPlan {
        SandboxPlan {
            read: vec![
                PathBuf::from("C:\\Users\\a\\AppData\\Roaming\\npm"),
                PathBuf::from("C:\\Users\\a"),
                PathBuf::from("C:\\"),
            ],
            write: vec![
                PathBuf::from("C:\\Users\\a\\notes"),
                PathBuf::from("C:\\Users\\a\\AppData\\Roaming\\Switchboard\\sandbox\\my fs"),
            ],
            network,
            hosts: Vec::new(),
            loopback: false,
            unix_sockets: false,
            stays_in_group: false,
            private_dir: PathBuf::from(
                "C:\\Users\\a\\AppData\\Roaming\\Switchboard\\sandbox\\my fs",
            ),
            home: PathBuf::from("C:\\Users\\a"),
        }
    }

    #[cfg(windows)]
    #[test]
    fn the_plan_becomes_a_container_with_its_folders_and_the_network_as_capabilities() {
        let made = container(&plan(Network::None)).unwrap();
        assert!(made.name.starts_with("Switchboard.my-fs."), "{}", made.name);
        assert!(made.capabilities.is_empty(), "no network: no capability");
        assert_eq!(
            made.grants,
            vec![
                Grant {
                    path: PathBuf::from("C:\\Users\\a\\AppData\\Roaming\\npm"),
                    write: false
                },
                Grant {
                    path: PathBuf::from("C:\\Users\\a\\notes"),
                    write: true
                },
                Grant {
                    path: PathBuf::from(
                        "C:\\Users\\a\\AppData\\Roaming\\Switchboard\\sandbox\\my fs"
                    ),
                    write: true
                },
            ],
            "never the home itself or a drive"
        );
    }

    #[test]
    fn any_network_is_the_internet_and_the_local_network_and_a_list_is_refused() {
        let home = PathBuf::from("/home/a");
        let unix = SandboxPlan {
            read: vec![home.join(".nvm"), home.clone(), PathBuf::from("/")],
            write: vec![home.join("notes")],
            home: home.clone(),
            private_dir: home.join(".local/share/switchboard/sandbox/fs"),
            ..plan(Network::Any)
        };
        let made = container(&unix).unwrap();
        assert_eq!(made.capabilities, vec![INTERNET_CLIENT, PRIVATE_NETWORK]);
        assert!(made.name.starts_with("Switchboard.fs."), "{}", made.name);
        // A narrower sandbox is another container (the old one's grants stay with it).
        let narrower = SandboxPlan {
            read: Vec::new(),
            ..unix.clone()
        };
        assert_ne!(container(&narrower).unwrap().name, made.name);
        assert_eq!(
            container(&unix).unwrap().name,
            made.name,
            "the same plan, the same one"
        );
        assert_eq!(
            made.grants
                .iter()
                .map(|g| (g.path.clone(), g.write))
                .collect::<Vec<_>>(),
            vec![(home.join(".nvm"), false), (home.join("notes"), true)],
            "never the home itself or the root"
        );
        let refused = container(&plan(Network::Hosts)).unwrap_err();
        assert!(refused.contains("not enforced on Windows"), "{refused}");
        let long = SandboxPlan {
            private_dir: PathBuf::from(format!("/x/{}", "é".repeat(80))),
            ..plan(Network::None)
        };
        assert!(container(&long).unwrap().name.len() <= 64);
    }

    #[test]
    fn the_launcher_s_command_line_carries_the_container_and_the_program() {
        let made = container(&plan(Network::None)).unwrap();
        let (program, line) = command_line(
            &made,
            Path::new("C:\\Program Files\\Switchboard\\switchboard.exe"),
            Path::new("C:\\nodejs\\npx.cmd"),
            &["-y".into(), "@scope/server".into()],
        );
        assert_eq!(
            program,
            PathBuf::from("C:\\Program Files\\Switchboard\\switchboard.exe")
        );
        assert_eq!(line[0], LAUNCH_FLAG);
        let back: Container = serde_json::from_str(line[1].to_str().unwrap()).unwrap();
        assert_eq!(back, made);
        assert_eq!(
            &line[2..],
            &["--", "C:\\nodejs\\npx.cmd", "-y", "@scope/server"].map(OsString::from)
        );
    }

    #[test]
    fn arguments_are_quoted_as_windows_programs_split_them() {
        assert_eq!(quoted("plain"), "plain");
        assert_eq!(quoted(""), "\"\"");
        assert_eq!(quoted("two words"), "\"two words\"");
        assert_eq!(quoted("say \"hi\""), "\"say \\\"hi\\\"\"");
        assert_eq!(quoted("C:\\dir with space\\"), "\"C:\\dir with space\\\\\"");
        assert_eq!(quoted("a\\\\\"b"), "\"a\\\\\\\\\\\"b\"");
        assert_eq!(
            process_line("C:\\Program Files\\nodejs\\node.exe", &["x y".into()]),
            "\"C:\\Program Files\\nodejs\\node.exe\" \"x y\""
        );
        assert_eq!(
            process_line("C:\\nodejs\\npx.CMD", &["-y".into(), "pkg".into()]),
            "cmd.exe /d /s /c \"C:\\nodejs\\npx.CMD -y pkg\""
        );
    }
}
