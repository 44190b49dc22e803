//! The one way every error in what a user gave (a request's field, a command's argument, a
//! config) says which field is at fault and why. The server answers it with its HTTP status
//! and the field in the error body; the command line exits with its exit code.

use std::borrow::Cow;

/// The exit code of a command whose input was at fault (1 is for everything else).
pub const USER_ERROR_EXIT_CODE: u8 = 2;

/// An error in the user's input, as opposed to a failure of the machine.
pub trait UserError: std::error::Error + Send + Sync + 'static {
    /// The dotted path of the field at fault, empty when it is the input as a whole.
    fn field(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    /// Why the input is refused, without the field's name.
    fn reason(&self) -> Cow<'_, str> {
        Cow::Owned(self.to_string())
    }

    /// The HTTP status the API answers it with: 422, the input parses but is not acceptable.
    fn http_status(&self) -> u16 {
        422
    }

    /// The exit code of a command that stops on it.
    fn exit_code(&self) -> u8 {
        USER_ERROR_EXIT_CODE
    }
}

impl UserError for super::GameError {}

/// How an error found in a chain of `dyn Error` (an `anyhow` error, a source chain) is seen
/// as a [`UserError`]. Every type that implements the trait registers one beside its `impl`
/// (`inventory::submit! { UserErrorKind::of::<T>() }`), so a front end finds any of them
/// through [`as_user_error`] and keeps no list of its own.
pub struct UserErrorKind {
    cast: for<'a> fn(&'a (dyn std::error::Error + 'static)) -> Option<&'a dyn UserError>,
}

impl UserErrorKind {
    /// The entry of `T`, found by its type.
    pub(crate) const fn of<T: UserError>() -> UserErrorKind {
        fn cast<'a, T: UserError>(
            e: &'a (dyn std::error::Error + 'static),
        ) -> Option<&'a dyn UserError> {
            e.downcast_ref::<T>().map(|u| u as &dyn UserError)
        }
        UserErrorKind { cast: cast::<T> }
    }

    /// An entry for an error that wraps a user error in some of its variants (and is a
    /// failure of the machine in the others).
    pub(crate) const fn with(
        cast: for<'a> fn(&'a (dyn std::error::Error + 'static)) -> Option<&'a dyn UserError>,
    ) -> UserErrorKind {
        UserErrorKind { cast }
    }
}

inventory::collect!(UserErrorKind);

/// `e` as a `UserError` when its type is one (registered with `UserErrorKind`).
pub fn as_user_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a dyn UserError> {
    inventory::iter::<UserErrorKind>
        .into_iter()
        .find_map(|kind| (kind.cast)(e))
}

inventory::submit! { UserErrorKind::of::<super::GameError>() }
