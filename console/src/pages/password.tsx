// Change password (POST /console/api/password): the current password and a new one, repeated. The
// user's other sessions end; this one stays. A wrong current password counts toward sign-in
// throttling, as a wrong sign-in does.
import { useState } from "react";
import { useMutation } from "@tanstack/react-query";
import { api, ApiError } from "../api/client";
import { ErrorBox, Page } from "../ui";

export default function ChangePassword() {
  const [currentPassword, setCurrent] = useState("");
  const [newPassword, setNew] = useState("");
  const [again, setAgain] = useState("");
  const mismatch = again.length > 0 && again !== newPassword;
  const change = useMutation({
    mutationFn: () => api.post("/console/api/password", { body: { currentPassword, newPassword } }),
    onSuccess: () => {
      setCurrent("");
      setNew("");
      setAgain("");
    },
  });
  const wrongCurrent = change.error instanceof ApiError && change.error.code === "invalid_credentials";
  return (
    <Page title="Change password">
      <form
        className="password-form"
        aria-label="Change password"
        onSubmit={(event) => {
          event.preventDefault();
          if (!mismatch) change.mutate();
        }}
      >
        <label>
          Current password
          <input
            type="password"
            autoComplete="current-password"
            required
            value={currentPassword}
            onChange={(e) => setCurrent(e.target.value)}
          />
        </label>
        <p>A new password has at least 12 characters and is not your e-mail address.</p>
        <label>
          New password
          <input
            type="password"
            autoComplete="new-password"
            minLength={12}
            required
            value={newPassword}
            onChange={(e) => setNew(e.target.value)}
          />
        </label>
        <label>
          Repeat the new password
          <input
            type="password"
            autoComplete="new-password"
            required
            value={again}
            aria-invalid={mismatch}
            onChange={(e) => setAgain(e.target.value)}
          />
        </label>
        {mismatch && <p role="alert">The new passwords differ.</p>}
        <button type="submit" disabled={change.isPending || mismatch}>
          Change password
        </button>
        {change.isSuccess && (
          <p role="status">Your password is changed. Your other sessions have ended; this one goes on.</p>
        )}
        {wrongCurrent && (
          <p role="alert" className="error">
            The current password is wrong.
          </p>
        )}
        {change.isError && !wrongCurrent && <ErrorBox error={change.error} />}
      </form>
    </Page>
  );
}
