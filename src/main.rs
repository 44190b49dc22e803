fn main() -> std::process::ExitCode {
    kalah_tuner::cli::main()
}
