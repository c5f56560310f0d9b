; Hooks of the NSIS installer (tauri.conf.json > bundle > windows > nsis > installerHooks).
; The installer puts `switchboard` on the PATH of the user it installs for, and its
; uninstaller takes it away again. The work is the app's own `switchboard shell-command`
; (src-tauri/core/src/shell_command.rs): it adds this folder to HKCU\Environment's Path once,
; keeps the value's %VARS%, and tells running programs. A failure is not the install's: the
; app works without it, and Settings › Command line or `switchboard shell-command install`
; can do it later.

!macro NSIS_HOOK_POSTINSTALL
  ExecWait '"$INSTDIR\${MAINBINARYNAME}.exe" shell-command install' $0
!macroend

; The template asks to close a running app only after this hook: asked first here, so an
; uninstall the person calls off leaves the PATH as it was.
!macro NSIS_HOOK_PREUNINSTALL
  !insertmacro CheckIfAppIsRunning "$INSTDIR\${MAINBINARYNAME}.exe" "${PRODUCTNAME}"
  ExecWait '"$INSTDIR\${MAINBINARYNAME}.exe" shell-command remove' $0
!macroend
