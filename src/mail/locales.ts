// Message catalogues for e-mails, the signer page and the review page. A locale is "known" only when it is complete
// here; the catalogue type makes the compiler reject a locale that misses or invents a key.
export const KNOWN_LOCALES = ['en', 'de', 'fr', 'es'] as const;
export type Locale = (typeof KNOWN_LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

/** Exact tags only: `de` is known, `de-DE`, `DE` and `de_DE` are not (callers answer 400). */
export const isKnownLocale = (tag: unknown): tag is Locale =>
  typeof tag === 'string' && (KNOWN_LOCALES as readonly string[]).includes(tag);

// Placeholders are `{name}`. Quotation marks follow each language's convention, so they live in the strings.
const en = {
  'mail.greeting': 'Hello {name},',
  'mail.greetingNoName': 'Hello,',
  'mail.openLink': 'Open this link to review and sign the document:',
  'mail.linkFallback': 'If the button does not work, copy this link into your browser:',
  'mail.messageFrom': 'Message from {workspace}:',
  'mail.footer.why': 'You received this e-mail because {workspace} uses Signet to collect signatures.',
  'mail.footer.doNotForward':
    'Please do not forward this e-mail: the link is personal and lets anyone who has it sign in your name.',
  'mail.memberInvitation.subject': 'You are invited to {workspace} on Signet',
  'mail.memberInvitation.intro':
    '{inviter} invited you to the {workspace} workspace on Signet. Set a password to sign in to its dashboard.',
  'mail.memberInvitation.button': 'Set your password',
  'mail.memberInvitation.expires': 'This link works once and expires on {date}.',
  'mail.memberInvitation.footer':
    'You received this because {inviter} invited you to {workspace}. If you did not expect it, ignore it.',
  'mail.invitation.subject': '{workspace} asks you to sign “{title}”',
  'mail.invitation.intro': '{workspace} has sent you “{title}” to review and sign.',
  'mail.invitation.button': 'Review and sign',
  'mail.invitation.expires': 'This request expires on {date}.',
  'mail.reminder.subject': 'Reminder: {workspace} is waiting for your signature on “{title}”',
  'mail.reminder.intro':
    'This is a reminder that “{title}”, sent to you by {workspace}, is still waiting for your signature.',
  'mail.completed.subject': 'Completed: “{title}”',
  'mail.completed.intro': 'All parties have signed “{title}”. The document is complete.',
  'mail.completed.body':
    'No further action is needed from you. If you need a copy of the signed document, please contact {workspace}.',
  'mail.declined.subject': 'Declined: “{title}”',
  'mail.declined.intro':
    '{decliner} declined to sign “{title}”. The signing process has been stopped, and you do not need to do anything further.',
  'mail.expired.subject': 'Expired: “{title}”',
  'mail.expired.intro':
    'The request from {workspace} to sign “{title}” expired on {date} and can no longer be signed. If you still need to sign, please contact {workspace}.',
  'mail.withdrawn.subject': 'Withdrawn: “{title}”',
  'mail.withdrawn.intro': '{workspace} has withdrawn the request to sign “{title}”. You no longer need to sign it.',

  'page.title': 'Sign a document',
  'page.sentBy': 'Sent by {workspace}',
  'page.reviewAndSign': 'Review and sign',
  'page.typeSignature': 'Type your signature',
  'page.drawSignature': 'Draw your signature',
  'page.clear': 'Clear',
  'page.sign': 'Sign',
  'page.decline': 'Decline',
  'page.declineReason': 'Reason for declining',
  'page.confirmDecline': 'Confirm decline',
  'page.cancel': 'Cancel',
  'page.signedThanks': 'Thank you — you signed this document.',
  'page.signedNext': 'You will receive an e-mail once everyone has signed.',
  'page.declinedDone': 'You declined to sign this document.',
  'page.expired': 'This request has expired.',
  'page.withdrawn': 'This request was withdrawn.',
  'page.notOpen': 'This request is no longer open.',
  'page.sessionEnded': 'This signing session has ended.',
  'page.sessionTimedOut': 'The time for this session ran out before the document was signed. Go back and start again.',
  'page.loading': 'Loading document…',
  'page.pageOf': 'Page {page} of {pages}',
  'page.signHere': 'Sign here',
  'page.signature': 'Signature',
  'page.initials': 'Initials',
  'page.date': 'Date',
  'page.text': 'Text',
  'page.fullName': 'Full name',
  'page.required': 'Required',
  'page.nextField': 'Next field',
  'page.consent': 'By selecting “Sign”, I agree that my electronic signature is as valid as my handwritten signature.',
  'page.errorGeneric': 'Something went wrong. Please try again.',
  'page.errorNetwork': 'The server could not be reached. Please check your connection and try again.',
  'page.errorDocumentLoad': 'The document could not be loaded.',
  'page.errorSignatureRequired': 'Please type or draw your signature.',
  'page.errorFieldsRequired': 'Please complete all required fields.',
  'page.errorReasonRequired': 'Please give a reason for declining.',
  'page.errorNotFound': 'This signing link is not valid.',
  'page.tooManyRequests': 'Too many requests came from your network.',
  'page.tryAgainIn': 'Please wait {seconds} seconds, then reload this page.',
  'page.errorRateLimited': 'Too many attempts. Please wait a moment and try again.',

  'review.title': 'Review a document',
  'review.heading': 'Review before sending',
  'review.preparedBy': 'Prepared by {workspace}',
  'review.intro': 'Check the document, the values and the recipients. Nothing is sent until you confirm.',
  'review.introGenerate': 'Check the document and the values. The file is finalized only when you confirm.',
  'review.template': 'Template',
  'review.templateVersion': '{name}, version {version}',
  'review.workspace': 'Workspace',
  'review.deadline': 'Review by',
  'review.deadlineHint': 'A document not confirmed by then is discarded.',
  'review.values': 'Values filled in by the sender',
  'review.field': 'Field',
  'review.value': 'Value',
  'review.noValues': 'This template has no values to fill in.',
  'review.recipients': 'Recipients',
  'review.order': 'Order',
  'review.role': 'Role',
  'review.recipient': 'Recipient',
  'review.channel': 'Channel',
  'review.channelEmail': 'E-mail',
  'review.channelSms': 'Text message (SMS)',
  'review.confirm': 'Confirm and send',
  'review.confirmGenerate': 'Confirm and finalize',
  'review.confirmNote': 'The first recipients are invited as soon as you confirm.',
  'review.confirmNoteGenerate': 'The file is sealed as soon as you confirm.',
  'review.discard': 'Discard…',
  'review.discardWarning': 'Discarding cancels this document for good: nothing is sent.',
  'review.discardConfirm': 'Yes, discard it',
  'review.download': 'Download the PDF',
  'review.noScript': 'The preview needs JavaScript; you can download the PDF instead.',
  'review.confirmed': 'Confirmed — the invitations were sent.',
  'review.confirmedGenerate': 'Confirmed — the file was finalized.',
  'review.discarded': 'Discarded — nothing was sent.',
  'review.expired': 'The review window has closed.',
  'review.expiredDetail': 'Documents not confirmed within 14 days are discarded; nothing was sent.',
  'review.notFound': 'This review link is not valid.',
  'review.alreadyConfirmed': 'This document was already confirmed.',
  'review.alreadyDiscarded': 'This document was already discarded.',
  'review.notStaged': 'This document is not waiting for review.',
  'review.renderFailed': 'The PDF could not be rendered, so nothing was sent. Please try again later.',
  'review.cannotConfirm': 'This document could not be confirmed.',
  'review.cannotDiscard': 'This document could not be discarded.',
  'review.back': 'Back to the review',
} as const;

export type MessageKey = keyof typeof en;
type Catalogue = { readonly [K in MessageKey]: string };

const de: Catalogue = {
  'mail.greeting': 'Guten Tag {name},',
  'mail.greetingNoName': 'Guten Tag,',
  'mail.openLink': 'Öffnen Sie diesen Link, um das Dokument zu prüfen und zu unterschreiben:',
  'mail.linkFallback': 'Falls die Schaltfläche nicht funktioniert, kopieren Sie diesen Link in Ihren Browser:',
  'mail.messageFrom': 'Nachricht von {workspace}:',
  'mail.footer.why': 'Sie erhalten diese E-Mail, weil {workspace} Unterschriften über Signet einholt.',
  'mail.footer.doNotForward':
    'Bitte leiten Sie diese E-Mail nicht weiter: Der Link ist persönlich, und wer ihn besitzt, kann in Ihrem Namen unterschreiben.',
  'mail.memberInvitation.subject': 'Einladung zu {workspace} auf Signet',
  'mail.memberInvitation.intro':
    '{inviter} hat Sie in den Arbeitsbereich {workspace} auf Signet eingeladen. Legen Sie ein Passwort fest, um sich im Dashboard anzumelden.',
  'mail.memberInvitation.button': 'Passwort festlegen',
  'mail.memberInvitation.expires': 'Dieser Link funktioniert einmal und läuft am {date} ab.',
  'mail.memberInvitation.footer':
    'Sie erhalten diese E-Mail, weil {inviter} Sie zu {workspace} eingeladen hat. Falls Sie das nicht erwartet haben, ignorieren Sie sie.',
  'mail.invitation.subject': '{workspace} bittet Sie, „{title}“ zu unterschreiben',
  'mail.invitation.intro': '{workspace} hat Ihnen „{title}“ zur Prüfung und Unterschrift gesendet.',
  'mail.invitation.button': 'Prüfen und unterschreiben',
  'mail.invitation.expires': 'Diese Anfrage läuft am {date} ab.',
  'mail.reminder.subject': 'Erinnerung: {workspace} wartet auf Ihre Unterschrift unter „{title}“',
  'mail.reminder.intro':
    'Wir möchten Sie daran erinnern, dass „{title}“ von {workspace} noch auf Ihre Unterschrift wartet.',
  'mail.completed.subject': 'Abgeschlossen: „{title}“',
  'mail.completed.intro': 'Alle Beteiligten haben „{title}“ unterschrieben. Das Dokument ist damit abgeschlossen.',
  'mail.completed.body':
    'Sie müssen nichts weiter tun. Wenn Sie eine Kopie des unterschriebenen Dokuments benötigen, wenden Sie sich bitte an {workspace}.',
  'mail.declined.subject': 'Abgelehnt: „{title}“',
  'mail.declined.intro':
    '{decliner} hat es abgelehnt, „{title}“ zu unterschreiben. Der Signaturvorgang wurde beendet; Sie müssen nichts weiter tun.',
  'mail.expired.subject': 'Abgelaufen: „{title}“',
  'mail.expired.intro':
    'Die Anfrage von {workspace}, „{title}“ zu unterschreiben, ist am {date} abgelaufen und kann nicht mehr unterschrieben werden. Falls Sie dennoch unterschreiben möchten, wenden Sie sich bitte an {workspace}.',
  'mail.withdrawn.subject': 'Zurückgezogen: „{title}“',
  'mail.withdrawn.intro':
    '{workspace} hat die Anfrage, „{title}“ zu unterschreiben, zurückgezogen. Sie müssen das Dokument nicht mehr unterschreiben.',

  'page.title': 'Dokument unterschreiben',
  'page.sentBy': 'Gesendet von {workspace}',
  'page.reviewAndSign': 'Prüfen und unterschreiben',
  'page.typeSignature': 'Unterschrift eingeben',
  'page.drawSignature': 'Unterschrift zeichnen',
  'page.clear': 'Löschen',
  'page.sign': 'Unterschreiben',
  'page.decline': 'Ablehnen',
  'page.declineReason': 'Grund der Ablehnung',
  'page.confirmDecline': 'Ablehnung bestätigen',
  'page.cancel': 'Abbrechen',
  'page.signedThanks': 'Vielen Dank – Sie haben dieses Dokument unterschrieben.',
  'page.signedNext': 'Sobald alle Beteiligten unterschrieben haben, erhalten Sie eine E-Mail.',
  'page.declinedDone': 'Sie haben es abgelehnt, dieses Dokument zu unterschreiben.',
  'page.expired': 'Diese Anfrage ist abgelaufen.',
  'page.withdrawn': 'Diese Anfrage wurde zurückgezogen.',
  'page.notOpen': 'Diese Anfrage ist nicht mehr offen.',
  'page.sessionEnded': 'Diese Signatursitzung ist beendet.',
  'page.sessionTimedOut':
    'Die Zeit für diese Sitzung ist abgelaufen, bevor das Dokument unterschrieben wurde. Gehen Sie zurück und beginnen Sie erneut.',
  'page.loading': 'Dokument wird geladen …',
  'page.pageOf': 'Seite {page} von {pages}',
  'page.signHere': 'Hier unterschreiben',
  'page.signature': 'Unterschrift',
  'page.initials': 'Initialen',
  'page.date': 'Datum',
  'page.text': 'Text',
  'page.fullName': 'Vollständiger Name',
  'page.required': 'Pflichtfeld',
  'page.nextField': 'Nächstes Feld',
  'page.consent':
    'Mit „Unterschreiben“ erkläre ich mich damit einverstanden, dass meine elektronische Unterschrift ebenso gültig ist wie meine handschriftliche.',
  'page.errorGeneric': 'Etwas ist schiefgelaufen. Bitte versuchen Sie es erneut.',
  'page.errorNetwork': 'Der Server ist nicht erreichbar. Bitte prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
  'page.errorDocumentLoad': 'Das Dokument konnte nicht geladen werden.',
  'page.errorSignatureRequired': 'Bitte geben Sie Ihre Unterschrift ein oder zeichnen Sie sie.',
  'page.errorFieldsRequired': 'Bitte füllen Sie alle Pflichtfelder aus.',
  'page.errorReasonRequired': 'Bitte geben Sie einen Grund für die Ablehnung an.',
  'page.errorNotFound': 'Dieser Link zum Unterschreiben ist ungültig.',
  'page.tooManyRequests': 'Aus Ihrem Netzwerk kamen zu viele Anfragen.',
  'page.tryAgainIn': 'Bitte warten Sie {seconds} Sekunden und laden Sie die Seite dann neu.',
  'page.errorRateLimited': 'Zu viele Versuche. Bitte warten Sie einen Moment und versuchen Sie es dann erneut.',

  'review.title': 'Dokument prüfen',
  'review.heading': 'Vor dem Versand prüfen',
  'review.preparedBy': 'Vorbereitet von {workspace}',
  'review.intro': 'Prüfen Sie das Dokument, die Werte und die Empfänger. Versendet wird erst, wenn Sie bestätigen.',
  'review.introGenerate':
    'Prüfen Sie das Dokument und die Werte. Die Datei wird erst fertiggestellt, wenn Sie bestätigen.',
  'review.template': 'Vorlage',
  'review.templateVersion': '{name}, Version {version}',
  'review.workspace': 'Arbeitsbereich',
  'review.deadline': 'Prüfen bis',
  'review.deadlineHint': 'Ein bis dahin nicht bestätigtes Dokument wird verworfen.',
  'review.values': 'Vom Absender ausgefüllte Werte',
  'review.field': 'Feld',
  'review.value': 'Wert',
  'review.noValues': 'Diese Vorlage hat keine auszufüllenden Werte.',
  'review.recipients': 'Empfänger',
  'review.order': 'Reihenfolge',
  'review.role': 'Rolle',
  'review.recipient': 'Person',
  'review.channel': 'Kanal',
  'review.channelEmail': 'E-Mail',
  'review.channelSms': 'SMS',
  'review.confirm': 'Bestätigen und senden',
  'review.confirmGenerate': 'Bestätigen und fertigstellen',
  'review.confirmNote': 'Die ersten Empfänger werden eingeladen, sobald Sie bestätigen.',
  'review.confirmNoteGenerate': 'Die Datei wird versiegelt, sobald Sie bestätigen.',
  'review.discard': 'Verwerfen …',
  'review.discardWarning': 'Verwerfen storniert dieses Dokument endgültig: Es wird nichts versendet.',
  'review.discardConfirm': 'Ja, verwerfen',
  'review.download': 'PDF herunterladen',
  'review.noScript': 'Die Vorschau benötigt JavaScript; Sie können stattdessen das PDF herunterladen.',
  'review.confirmed': 'Bestätigt – die Einladungen wurden versendet.',
  'review.confirmedGenerate': 'Bestätigt – die Datei wurde fertiggestellt.',
  'review.discarded': 'Verworfen – es wurde nichts versendet.',
  'review.expired': 'Die Prüffrist ist abgelaufen.',
  'review.expiredDetail':
    'Dokumente, die nicht innerhalb von 14 Tagen bestätigt werden, werden verworfen; es wurde nichts versendet.',
  'review.notFound': 'Dieser Prüflink ist ungültig.',
  'review.alreadyConfirmed': 'Dieses Dokument wurde bereits bestätigt.',
  'review.alreadyDiscarded': 'Dieses Dokument wurde bereits verworfen.',
  'review.notStaged': 'Dieses Dokument wartet nicht auf eine Prüfung.',
  'review.renderFailed':
    'Das PDF konnte nicht erzeugt werden, daher wurde nichts versendet. Bitte versuchen Sie es später erneut.',
  'review.cannotConfirm': 'Dieses Dokument konnte nicht bestätigt werden.',
  'review.cannotDiscard': 'Dieses Dokument konnte nicht verworfen werden.',
  'review.back': 'Zurück zur Prüfung',
};

// French typography: a no-break space inside guillemets and before : ; ? !
const fr: Catalogue = {
  'mail.greeting': 'Bonjour {name},',
  'mail.greetingNoName': 'Bonjour,',
  'mail.openLink': 'Ouvrez ce lien pour consulter et signer le document\u00a0:',
  'mail.linkFallback': 'Si le bouton ne fonctionne pas, copiez ce lien dans votre navigateur\u00a0:',
  'mail.messageFrom': 'Message de {workspace}\u00a0:',
  'mail.footer.why': 'Vous recevez cet e-mail parce que {workspace} utilise Signet pour recueillir des signatures.',
  'mail.footer.doNotForward':
    'Merci de ne pas transférer cet e-mail\u00a0: ce lien est personnel et permet à quiconque le détient de signer en votre nom.',
  'mail.memberInvitation.subject': 'Invitation à rejoindre {workspace} sur Signet',
  'mail.memberInvitation.intro':
    '{inviter} vous a invité dans l’espace {workspace} sur Signet. Choisissez un mot de passe pour vous connecter au tableau de bord.',
  'mail.memberInvitation.button': 'Choisir un mot de passe',
  'mail.memberInvitation.expires': 'Ce lien ne fonctionne qu’une fois et expire le {date}.',
  'mail.memberInvitation.footer':
    'Vous recevez ce message car {inviter} vous a invité dans {workspace}. Si vous ne vous y attendiez pas, ignorez-le.',
  'mail.invitation.subject': '{workspace} vous invite à signer «\u00a0{title}\u00a0»',
  'mail.invitation.intro': '{workspace} vous a envoyé «\u00a0{title}\u00a0» pour relecture et signature.',
  'mail.invitation.button': 'Consulter et signer',
  'mail.invitation.expires': 'Cette demande expire le {date}.',
  'mail.reminder.subject': 'Rappel\u00a0: {workspace} attend votre signature pour «\u00a0{title}\u00a0»',
  'mail.reminder.intro':
    'Nous vous rappelons que le document «\u00a0{title}\u00a0», envoyé par {workspace}, attend toujours votre signature.',
  'mail.completed.subject': 'Finalisé\u00a0: «\u00a0{title}\u00a0»',
  'mail.completed.intro': 'Toutes les parties ont signé «\u00a0{title}\u00a0». Le document est finalisé.',
  'mail.completed.body':
    'Aucune autre action n’est requise de votre part. Pour obtenir une copie du document signé, veuillez contacter {workspace}.',
  'mail.declined.subject': 'Refusé\u00a0: «\u00a0{title}\u00a0»',
  'mail.declined.intro':
    '{decliner} a refusé de signer «\u00a0{title}\u00a0». La procédure de signature a été interrompue\u00a0; aucune action n’est requise de votre part.',
  'mail.expired.subject': 'Expiré\u00a0: «\u00a0{title}\u00a0»',
  'mail.expired.intro':
    'La demande de signature de «\u00a0{title}\u00a0» envoyée par {workspace} a expiré le {date} et ne peut plus être signée. Si vous devez encore signer, veuillez contacter {workspace}.',
  'mail.withdrawn.subject': 'Demande retirée\u00a0: «\u00a0{title}\u00a0»',
  'mail.withdrawn.intro':
    '{workspace} a retiré la demande de signature de «\u00a0{title}\u00a0». Vous n’avez plus besoin de signer ce document.',

  'page.title': 'Signer un document',
  'page.sentBy': 'Envoyé par {workspace}',
  'page.reviewAndSign': 'Consulter et signer',
  'page.typeSignature': 'Saisir votre signature',
  'page.drawSignature': 'Dessiner votre signature',
  'page.clear': 'Effacer',
  'page.sign': 'Signer',
  'page.decline': 'Refuser',
  'page.declineReason': 'Motif du refus',
  'page.confirmDecline': 'Confirmer le refus',
  'page.cancel': 'Annuler',
  'page.signedThanks': 'Merci — vous avez signé ce document.',
  'page.signedNext': 'Vous recevrez un e-mail lorsque toutes les parties auront signé.',
  'page.declinedDone': 'Vous avez refusé de signer ce document.',
  'page.expired': 'Cette demande a expiré.',
  'page.withdrawn': 'Cette demande a été retirée.',
  'page.notOpen': 'Cette demande n’est plus ouverte.',
  'page.sessionEnded': 'Cette session de signature est terminée.',
  'page.sessionTimedOut':
    'Le temps imparti à cette session s’est écoulé avant la signature du document. Revenez en arrière et recommencez.',
  'page.loading': 'Chargement du document…',
  'page.pageOf': 'Page {page} sur {pages}',
  'page.signHere': 'Signer ici',
  'page.signature': 'Signature',
  'page.initials': 'Initiales',
  'page.date': 'Date',
  'page.text': 'Texte',
  'page.fullName': 'Nom complet',
  'page.required': 'Obligatoire',
  'page.nextField': 'Champ suivant',
  'page.consent':
    'En sélectionnant «\u00a0Signer\u00a0», j’accepte que ma signature électronique ait la même valeur que ma signature manuscrite.',
  'page.errorGeneric': 'Une erreur s’est produite. Veuillez réessayer.',
  'page.errorNetwork': 'Impossible de joindre le serveur. Veuillez vérifier votre connexion et réessayer.',
  'page.errorDocumentLoad': 'Le document n’a pas pu être chargé.',
  'page.errorSignatureRequired': 'Veuillez saisir ou dessiner votre signature.',
  'page.errorFieldsRequired': 'Veuillez remplir tous les champs obligatoires.',
  'page.errorReasonRequired': 'Veuillez indiquer le motif de votre refus.',
  'page.errorNotFound': 'Ce lien de signature n’est pas valide.',
  'page.tooManyRequests': 'Trop de requêtes sont venues de votre réseau.',
  'page.tryAgainIn': 'Veuillez patienter {seconds} secondes, puis rechargez cette page.',
  'page.errorRateLimited': 'Trop de tentatives. Veuillez patienter un instant, puis réessayer.',

  'review.title': 'Vérifier un document',
  'review.heading': 'Vérifier avant l’envoi',
  'review.preparedBy': 'Préparé par {workspace}',
  'review.intro': 'Vérifiez le document, les valeurs et les destinataires. Rien n’est envoyé avant votre confirmation.',
  'review.introGenerate': 'Vérifiez le document et les valeurs. Le fichier n’est finalisé qu’après votre confirmation.',
  'review.template': 'Modèle',
  'review.templateVersion': '{name} (version\u00a0{version})',
  'review.workspace': 'Espace de travail',
  'review.deadline': 'À vérifier avant le',
  'review.deadlineHint': 'Un document non confirmé à cette date est abandonné.',
  'review.values': 'Valeurs saisies par l’expéditeur',
  'review.field': 'Champ',
  'review.value': 'Valeur',
  'review.noValues': 'Ce modèle n’a aucune valeur à saisir.',
  'review.recipients': 'Destinataires',
  'review.order': 'Ordre',
  'review.role': 'Rôle',
  'review.recipient': 'Destinataire',
  'review.channel': 'Canal',
  'review.channelEmail': 'Courriel',
  'review.channelSms': 'SMS',
  'review.confirm': 'Confirmer et envoyer',
  'review.confirmGenerate': 'Confirmer et finaliser',
  'review.confirmNote': 'Les premiers destinataires sont invités dès votre confirmation.',
  'review.confirmNoteGenerate': 'Le fichier est scellé dès votre confirmation.',
  'review.discard': 'Abandonner…',
  'review.discardWarning': 'Abandonner annule définitivement ce document\u00a0: rien n’est envoyé.',
  'review.discardConfirm': 'Oui, l’abandonner',
  'review.download': 'Télécharger le PDF',
  'review.noScript': 'L’aperçu nécessite JavaScript\u00a0; vous pouvez télécharger le PDF à la place.',
  'review.confirmed': 'Confirmé — les invitations ont été envoyées.',
  'review.confirmedGenerate': 'Confirmé — le fichier a été finalisé.',
  'review.discarded': 'Abandonné — rien n’a été envoyé.',
  'review.expired': 'Le délai de vérification est écoulé.',
  'review.expiredDetail': 'Les documents non confirmés sous 14\u00a0jours sont abandonnés\u00a0; rien n’a été envoyé.',
  'review.notFound': 'Ce lien de vérification n’est pas valide.',
  'review.alreadyConfirmed': 'Ce document a déjà été confirmé.',
  'review.alreadyDiscarded': 'Ce document a déjà été abandonné.',
  'review.notStaged': 'Ce document n’est pas en attente de vérification.',
  'review.renderFailed': 'Le PDF n’a pas pu être généré, rien n’a donc été envoyé. Veuillez réessayer plus tard.',
  'review.cannotConfirm': 'Ce document n’a pas pu être confirmé.',
  'review.cannotDiscard': 'Ce document n’a pas pu être abandonné.',
  'review.back': 'Retour à la vérification',
};

const es: Catalogue = {
  'mail.greeting': 'Hola, {name}:',
  'mail.greetingNoName': 'Hola:',
  'mail.openLink': 'Abra este enlace para revisar y firmar el documento:',
  'mail.linkFallback': 'Si el botón no funciona, copie este enlace en su navegador:',
  'mail.messageFrom': 'Mensaje de {workspace}:',
  'mail.footer.why': 'Ha recibido este correo electrónico porque {workspace} utiliza Signet para recabar firmas.',
  'mail.footer.doNotForward':
    'No reenvíe este correo electrónico: el enlace es personal y permite a cualquier persona que lo tenga firmar en su nombre.',
  'mail.memberInvitation.subject': 'Invitación a {workspace} en Signet',
  'mail.memberInvitation.intro':
    '{inviter} le ha invitado al espacio de trabajo {workspace} en Signet. Elija una contraseña para entrar en su panel.',
  'mail.memberInvitation.button': 'Elegir contraseña',
  'mail.memberInvitation.expires': 'Este enlace funciona una vez y vence el {date}.',
  'mail.memberInvitation.footer':
    'Recibe este mensaje porque {inviter} le ha invitado a {workspace}. Si no lo esperaba, ignórelo.',
  'mail.invitation.subject': '{workspace} le solicita que firme «{title}»',
  'mail.invitation.intro': '{workspace} le ha enviado «{title}» para que lo revise y lo firme.',
  'mail.invitation.button': 'Revisar y firmar',
  'mail.invitation.expires': 'Esta solicitud vence el {date}.',
  'mail.reminder.subject': 'Recordatorio: {workspace} está esperando su firma en «{title}»',
  'mail.reminder.intro': 'Le recordamos que «{title}», enviado por {workspace}, sigue pendiente de su firma.',
  'mail.completed.subject': 'Completado: «{title}»',
  'mail.completed.intro': 'Todas las partes han firmado «{title}». El documento está completado.',
  'mail.completed.body':
    'No necesita hacer nada más. Si necesita una copia del documento firmado, póngase en contacto con {workspace}.',
  'mail.declined.subject': 'Rechazado: «{title}»',
  'mail.declined.intro':
    '{decliner} ha rechazado firmar «{title}». El proceso de firma se ha detenido y usted no necesita hacer nada más.',
  'mail.expired.subject': 'Vencido: «{title}»',
  'mail.expired.intro':
    'La solicitud de {workspace} para firmar «{title}» venció el {date} y ya no se puede firmar. Si todavía necesita firmarlo, póngase en contacto con {workspace}.',
  'mail.withdrawn.subject': 'Retirado: «{title}»',
  'mail.withdrawn.intro': '{workspace} ha retirado la solicitud de firma de «{title}». Ya no necesita firmarlo.',

  'page.title': 'Firmar un documento',
  'page.sentBy': 'Enviado por {workspace}',
  'page.reviewAndSign': 'Revisar y firmar',
  'page.typeSignature': 'Escriba su firma',
  'page.drawSignature': 'Dibuje su firma',
  'page.clear': 'Borrar',
  'page.sign': 'Firmar',
  'page.decline': 'Rechazar',
  'page.declineReason': 'Motivo del rechazo',
  'page.confirmDecline': 'Confirmar el rechazo',
  'page.cancel': 'Cancelar',
  'page.signedThanks': 'Gracias: ha firmado este documento.',
  'page.signedNext': 'Recibirá un correo electrónico cuando todas las partes hayan firmado.',
  'page.declinedDone': 'Ha rechazado firmar este documento.',
  'page.expired': 'Esta solicitud ha vencido.',
  'page.withdrawn': 'Esta solicitud ha sido retirada.',
  'page.notOpen': 'Esta solicitud ya no está abierta.',
  'page.sessionEnded': 'Esta sesión de firma ha finalizado.',
  'page.sessionTimedOut':
    'El tiempo de esta sesión se agotó antes de firmar el documento. Vuelva atrás y empiece de nuevo.',
  'page.loading': 'Cargando el documento…',
  'page.pageOf': 'Página {page} de {pages}',
  'page.signHere': 'Firme aquí',
  'page.signature': 'Firma',
  'page.initials': 'Iniciales',
  'page.date': 'Fecha',
  'page.text': 'Texto',
  'page.fullName': 'Nombre completo',
  'page.required': 'Obligatorio',
  'page.nextField': 'Siguiente campo',
  'page.consent':
    'Al seleccionar «Firmar», acepto que mi firma electrónica tiene la misma validez que mi firma manuscrita.',
  'page.errorGeneric': 'Se ha producido un error. Inténtelo de nuevo.',
  'page.errorNetwork': 'No se puede conectar con el servidor. Compruebe su conexión e inténtelo de nuevo.',
  'page.errorDocumentLoad': 'No se ha podido cargar el documento.',
  'page.errorSignatureRequired': 'Escriba o dibuje su firma.',
  'page.errorFieldsRequired': 'Complete todos los campos obligatorios.',
  'page.errorReasonRequired': 'Indique el motivo del rechazo.',
  'page.errorNotFound': 'Este enlace de firma no es válido.',
  'page.tooManyRequests': 'Llegaron demasiadas solicitudes desde su red.',
  'page.tryAgainIn': 'Espere {seconds} segundos y vuelva a cargar esta página.',
  'page.errorRateLimited': 'Demasiados intentos. Espere un momento e inténtelo de nuevo.',

  'review.title': 'Revisar un documento',
  'review.heading': 'Revisar antes de enviar',
  'review.preparedBy': 'Preparado por {workspace}',
  'review.intro': 'Revise el documento, los valores y los destinatarios. No se envía nada hasta que confirme.',
  'review.introGenerate': 'Revise el documento y los valores. El archivo solo se finaliza cuando confirme.',
  'review.template': 'Plantilla',
  'review.templateVersion': '{name}, versión {version}',
  'review.workspace': 'Espacio de trabajo',
  'review.deadline': 'Revisar antes del',
  'review.deadlineHint': 'Un documento que no se confirme antes se descarta.',
  'review.values': 'Valores completados por el remitente',
  'review.field': 'Campo',
  'review.value': 'Valor',
  'review.noValues': 'Esta plantilla no tiene valores que completar.',
  'review.recipients': 'Destinatarios',
  'review.order': 'Orden',
  'review.role': 'Rol',
  'review.recipient': 'Destinatario',
  'review.channel': 'Canal',
  'review.channelEmail': 'Correo electrónico',
  'review.channelSms': 'SMS',
  'review.confirm': 'Confirmar y enviar',
  'review.confirmGenerate': 'Confirmar y finalizar',
  'review.confirmNote': 'Los primeros destinatarios reciben la invitación en cuanto confirme.',
  'review.confirmNoteGenerate': 'El archivo se sella en cuanto confirme.',
  'review.discard': 'Descartar…',
  'review.discardWarning': 'Descartar cancela este documento definitivamente: no se envía nada.',
  'review.discardConfirm': 'Sí, descartarlo',
  'review.download': 'Descargar el PDF',
  'review.noScript': 'La vista previa necesita JavaScript; puede descargar el PDF en su lugar.',
  'review.confirmed': 'Confirmado: se enviaron las invitaciones.',
  'review.confirmedGenerate': 'Confirmado: el archivo se finalizó.',
  'review.discarded': 'Descartado: no se envió nada.',
  'review.expired': 'El plazo de revisión ha terminado.',
  'review.expiredDetail': 'Los documentos que no se confirman en 14 días se descartan; no se envió nada.',
  'review.notFound': 'Este enlace de revisión no es válido.',
  'review.alreadyConfirmed': 'Este documento ya se confirmó.',
  'review.alreadyDiscarded': 'Este documento ya se descartó.',
  'review.notStaged': 'Este documento no está pendiente de revisión.',
  'review.renderFailed': 'No se pudo generar el PDF, así que no se envió nada. Inténtelo de nuevo más tarde.',
  'review.cannotConfirm': 'No se pudo confirmar este documento.',
  'review.cannotDiscard': 'No se pudo descartar este documento.',
  'review.back': 'Volver a la revisión',
};

export const catalogues: Readonly<Record<Locale, Catalogue>> = { en, de, fr, es };

export type Vars = Readonly<Record<string, string | number>>;

/** Fills `{name}` placeholders. A placeholder without a value is a programming error, so it throws. */
export function fill(template: string, vars: Vars = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = vars[name];
    if (v === undefined) throw new Error(`missing value for {${name}} in "${template}"`);
    return String(v);
  });
}

/** The message `key` in `locale`, placeholders filled. Values are inserted raw: escape the result for HTML. */
export function t(locale: Locale, key: MessageKey, vars?: Vars): string {
  const cat = catalogues[locale];
  if (!cat) throw new Error(`unknown locale "${String(locale)}"`);
  return fill(cat[key], vars);
}

type PageKey = MessageKey extends infer K ? (K extends `page.${infer P}` ? P : never) : never;
export type PageStrings = { readonly [K in PageKey]: string };

/**
 * Every string of the signer page in `locale`, keyed without the `page.` prefix. Values may hold placeholders
 * (`pageOf`: {page} {pages}; `sentBy`: {workspace}); fill them with `fill()` or on the client.
 */
export function pageStrings(locale: Locale): PageStrings {
  const cat = catalogues[locale];
  if (!cat) throw new Error(`unknown locale "${String(locale)}"`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(cat)) if (k.startsWith('page.')) out[k.slice(5)] = v;
  return out as PageStrings;
}

type ReviewKey = MessageKey extends infer K ? (K extends `review.${infer P}` ? P : never) : never;
export type ReviewStrings = { readonly [K in ReviewKey]: string };

/**
 * Every string of the review page of staged template instances in `locale`, keyed without the `review.` prefix
 * (`preparedBy`: {workspace}; `templateVersion`: {name} {version}).
 */
export function reviewStrings(locale: Locale): ReviewStrings {
  const cat = catalogues[locale];
  if (!cat) throw new Error(`unknown locale "${String(locale)}"`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(cat)) if (k.startsWith('review.')) out[k.slice(7)] = v;
  return out as ReviewStrings;
}

/** Date and time in the locale's words, in UTC and labelled so, e.g. "6. Dezember 2026 um 10:00 UTC". */
export function formatDateTime(locale: Locale, ms: number): string {
  return new Intl.DateTimeFormat(locale, {
    year: 'numeric',
    month: 'long',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZone: 'UTC',
    timeZoneName: 'short',
  }).format(ms);
}
